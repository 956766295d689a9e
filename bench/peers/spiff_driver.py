"""Run one BPMN model on SpiffWorkflow 3.x; print {"load_s", "run_s", "tasks"} as JSON.

Each no-op task is a bpmn:task, which SpiffWorkflow treats as manual: the driver completes
every ready one (its control point), and the engine runs gateways in do_engine_steps.
Usage: python spiff_driver.py MODEL.bpmn

SpiffWorkflow keeps a run as a task tree in which each task is the child of the one before
it, and its tree walks (TaskIterator: is_completed(), do_engine_steps(), get_tasks()) stop
at depth 1,000 by default: a path longer than that is reported complete with its deeper
tasks never run (repro/spiff_max_depth.py). The driver checks the whole tree once the run
says it is complete and fails with what was left, rather than report a short run.
"""

import json
import sys
import threading
import time


# SpiffWorkflow's parser and task tree recurse once per node in a chain: give them room.
sys.setrecursionlimit(1_000_000)
threading.stack_size(1 << 30)


def main():
    t0 = time.perf_counter()
    from SpiffWorkflow.bpmn import BpmnWorkflow  # noqa: E402
    from SpiffWorkflow.bpmn.parser import BpmnParser  # noqa: E402
    from SpiffWorkflow.util.task import TaskState  # noqa: E402

    t1 = time.perf_counter()
    parser = BpmnParser()
    parser.add_bpmn_file(sys.argv[1])
    workflow = BpmnWorkflow(parser.get_spec("P"))
    for task in workflow.get_tasks():  # the start event: its data flows to every later task
        task.data["go"] = 1
    t2 = time.perf_counter()
    done = 0
    workflow.do_engine_steps()
    while not workflow.is_completed():
        ready = workflow.get_tasks(state=TaskState.READY, manual=True)
        if not ready:
            raise Failure("spiff: stuck with no ready task")
        for task in ready:
            task.run()  # the no-op control point
            done += 1
        workflow.do_engine_steps()
    t3 = time.perf_counter()
    left = workflow.get_tasks(state=TaskState.NOT_FINISHED_MASK, max_depth=sys.maxsize)
    if left:
        first = left[0]
        raise Failure(
            f"is_completed() turned true after {done} tasks with {len(left)} unfinished, from "
            f"{first.task_spec.name} ({TaskState.get_name(first.state)}) at depth {first.depth} of the task tree"
        )
    print(json.dumps({"import_s": t1 - t0, "load_s": t2 - t1, "run_s": t3 - t2, "tasks": done}))


class Failure(Exception):
    """The run did not do what the model says; the message says why."""


failure = []


def guarded():
    try:
        main()
    except Failure as e:
        failure.append(e)
        print(e, file=sys.stderr, flush=True)
    except BaseException as e:  # noqa: BLE001 - reported by the exit code
        failure.append(e)
        raise


thread = threading.Thread(target=guarded)
thread.start()
thread.join()
sys.exit(1 if failure else 0)
