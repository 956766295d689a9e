"""Run one BPMN model on SpiffWorkflow 3.x; print {"load_s", "run_s", "tasks"} as JSON.

Each no-op task is a bpmn:task, which SpiffWorkflow treats as manual: the driver completes
every ready one (its control point), and the engine runs gateways in do_engine_steps.
Usage: python spiff_driver.py MODEL.bpmn
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
            sys.exit("spiff: stuck with no ready task")
        for task in ready:
            task.run()  # the no-op control point
            done += 1
        workflow.do_engine_steps()
    t3 = time.perf_counter()
    print(json.dumps({"import_s": t1 - t0, "load_s": t2 - t1, "run_s": t3 - t2, "tasks": done}))


failure = []


def guarded():
    try:
        main()
    except BaseException as e:  # noqa: BLE001 - reported by the exit code
        failure.append(e)
        raise


thread = threading.Thread(target=guarded)
thread.start()
thread.join()
sys.exit(1 if failure else 0)
