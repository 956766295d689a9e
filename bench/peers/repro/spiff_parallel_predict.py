"""SpiffWorkflow 3.x: chained parallel blocks make the task tree grow as 2^blocks.

k blocks of parallel split -> task A + task B -> parallel join, in a chain. Expected: a
task tree of about 4k + 3 tasks. Observed (SpiffWorkflow 3.2.0): BpmnWorkflow(spec)
predicts the whole future tree up front, and each branch of a split gets its own copy of
the join and of everything after it (a tree, not a graph), so the tree holds ~2^(k+2)
tasks before a single task runs: the benchmark's par 100 (25 blocks) never starts.
Usage: python spiff_parallel_predict.py
"""

import os
import tempfile
import time

from SpiffWorkflow.bpmn import BpmnWorkflow
from SpiffWorkflow.bpmn.parser import BpmnParser


def model(k):
    xml = ['<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" targetNamespace="x">',
           '<process id="P" isExecutable="true"><startEvent id="start"/><endEvent id="end"/>']
    prev, f = "start", 0
    for i in range(k):
        xml.append(f'<parallelGateway id="s{i}"/><task id="a{i}"/><task id="b{i}"/><parallelGateway id="j{i}"/>')
        for src, dst in ((prev, f"s{i}"), (f"s{i}", f"a{i}"), (f"s{i}", f"b{i}"), (f"a{i}", f"j{i}"), (f"b{i}", f"j{i}")):
            f += 1
            xml.append(f'<sequenceFlow id="f{f}" sourceRef="{src}" targetRef="{dst}"/>')
        prev = f"j{i}"
    xml.append(f'<sequenceFlow id="fend" sourceRef="{prev}" targetRef="end"/></process></definitions>')
    path = os.path.join(tempfile.mkdtemp(), f"par-{k}.bpmn")
    with open(path, "w") as out:
        out.write("\n".join(xml))
    return path


for k in (2, 4, 6, 8, 10, 12, 14):
    parser = BpmnParser()
    parser.add_bpmn_file(model(k))
    spec = parser.get_spec("P")
    t = time.perf_counter()
    workflow = BpmnWorkflow(spec)
    took = time.perf_counter() - t
    print(f"{k:2} blocks ({4 * k} flow nodes): {len(workflow.get_tasks(max_depth=10**9)):6} tasks in the tree, BpmnWorkflow() took {took:.3f} s")
