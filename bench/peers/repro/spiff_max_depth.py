"""SpiffWorkflow 3.x: a process whose path is longer than 1,000 tasks "completes" early.

A chain of 1,005 manual tasks, each completed by the usual driver loop (do_engine_steps,
run the ready manual tasks, until is_completed()). Expected: 1,005 tasks run, then the end
event. Observed (SpiffWorkflow 3.2.0): is_completed() turns True after 999, with the next
task READY. In Spiff's task tree each task is the child of the one before it, and every
tree walk (TaskIterator, util/task.py) stops at max_depth=1000 by default: is_completed(),
do_engine_steps() and get_tasks() never see a task deeper than 1,000.
Usage: python spiff_max_depth.py
"""

import os
import sys
import tempfile

from SpiffWorkflow.bpmn import BpmnWorkflow
from SpiffWorkflow.bpmn.parser import BpmnParser
from SpiffWorkflow.util.task import TaskState

sys.setrecursionlimit(100_000)
N = 1005
xml = ['<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" targetNamespace="x">',
       '<process id="P" isExecutable="true"><startEvent id="start"/><endEvent id="end"/>']
prev = "start"
for i in range(N):
    xml.append(f'<task id="t{i}"/><sequenceFlow id="f{i}" sourceRef="{prev}" targetRef="t{i}"/>')
    prev = f"t{i}"
xml.append(f'<sequenceFlow id="fend" sourceRef="{prev}" targetRef="end"/></process></definitions>')
path = os.path.join(tempfile.mkdtemp(), "chain.bpmn")
with open(path, "w") as f:
    f.write("\n".join(xml))

parser = BpmnParser()
parser.add_bpmn_file(path)
workflow = BpmnWorkflow(parser.get_spec("P"))
ran = 0
workflow.do_engine_steps()
while not workflow.is_completed():
    for task in workflow.get_tasks(state=TaskState.READY, manual=True):
        task.run()
        ran += 1
    workflow.do_engine_steps()
left = workflow.get_tasks(state=TaskState.NOT_FINISHED_MASK, max_depth=10**9)
print(f"manual tasks run: {ran} of {N}; is_completed() = {workflow.is_completed()}")
print(f"unfinished tasks the default walk cannot see: {[f'{t.task_spec.name} ({TaskState.get_name(t.state)}, depth {t.depth})' for t in left][:4]}")
