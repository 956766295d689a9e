"""Run the LangGraph 1.x equivalent of one model; print {"load_s", "run_s", "tasks"} as JSON.

Nodes are the model's tasks (each a no-op Python function); an exclusive split is a
conditional edge on `go`, a parallel split is a fan-out and its join a waiting edge
(add_edge([a, b], next)). Gateways are edges, not nodes.
Usage: python langgraph_driver.py SHAPE N memory|none
"""

import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import models  # noqa: E402

t0 = time.perf_counter()
from typing import TypedDict  # noqa: E402

from langgraph.graph import END, START, StateGraph  # noqa: E402

t1 = time.perf_counter()
shape, n, saver = sys.argv[1], int(sys.argv[2]), sys.argv[3]


class State(TypedDict):
    go: int


calls = 0


def noop(state):  # the no-op control point
    global calls
    calls += 1
    return None


def route(state):
    return "a" if state["go"] == 1 else "b"


g = StateGraph(State)
# frontier: ("one", [node]) | ("any", [a, b]) after an exclusive merge | ("all", [a, b]) after a join
frontier = ("one", [START])


def connect(target):
    kind, nodes = frontier
    if kind == "all":
        g.add_edge(list(nodes), target)
    else:
        for node in nodes:
            g.add_edge(node, target)


for i, element in enumerate(models.plan(shape, n)):
    if element == "task":
        g.add_node(f"t{i}", noop)
        connect(f"t{i}")
        frontier = ("one", [f"t{i}"])
    elif element == "xor":
        a, b = f"a{i}", f"b{i}"
        g.add_node(a, noop)
        g.add_node(b, noop)
        assert frontier[0] != "all"
        for node in frontier[1]:
            g.add_conditional_edges(node, route, {"a": a, "b": b})
        frontier = ("any", [a, b])
    else:
        a, b = f"a{i}", f"b{i}"
        g.add_node(a, noop)
        g.add_node(b, noop)
        connect(a)
        connect(b)
        frontier = ("all", [a, b])
connect(END)

config = {"recursion_limit": n + 100}
checkpointer = None
if saver == "memory":
    from langgraph.checkpoint.memory import InMemorySaver

    checkpointer = InMemorySaver()
    config["configurable"] = {"thread_id": "bench"}
graph = g.compile(checkpointer=checkpointer)
t2 = time.perf_counter()
result = graph.invoke({"go": 1}, config)
t3 = time.perf_counter()
assert result["go"] == 1
print(json.dumps({"import_s": t1 - t0, "load_s": t2 - t1, "run_s": t3 - t2, "tasks": calls}))
