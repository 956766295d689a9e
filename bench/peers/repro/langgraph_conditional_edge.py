"""LangGraph: one conditional edge costs time proportional to the whole graph.

The same 200 steps (a chain of 200 nodes, each joined to the next by a conditional edge,
or, as a control, by a plain edge), in graphs padded with P extra nodes that never run.
Expected: the run time does not depend on P. Observed (LangGraph 1.2.24): with conditional
edges it grows with P (with plain edges it barely moves), because a conditional edge reads
the state `fresh` (langgraph/pregel/_algo.py local_read, fresh=True, which StateGraph
always sets for a branch's reader) and that copies every channel of the graph, one
`branch:to:<node>` channel per node, not only the keys it reads. A chain of n exclusive
splits therefore costs O(n^2).
Usage: python langgraph_conditional_edge.py
"""

import time
from typing import TypedDict

from langgraph.graph import END, START, StateGraph


class State(TypedDict):
    go: int


def noop(state):
    return None


def route(state):
    return "next" if state["go"] == 1 else "stop"


def build(pad, conditional):
    g = StateGraph(State)
    chain = [f"n{i}" for i in range(200)]
    for name in chain:
        g.add_node(name, noop)
    g.add_edge(START, chain[0])
    for a, b in zip(chain, chain[1:]):
        if conditional:
            g.add_conditional_edges(a, route, {"next": b, "stop": END})
        else:
            g.add_edge(a, b)
    g.add_edge(chain[-1], END)
    for i in range(pad):  # never reached: only makes the graph bigger
        g.add_node(f"pad{i}", noop)
        g.add_edge(f"pad{i}", END)
    return g.compile()


def timed(graph):
    t = time.perf_counter()
    graph.invoke({"go": 1}, {"recursion_limit": 1000})
    return time.perf_counter() - t


for pad in (0, 2000, 4000, 8000):
    routed, plain = build(pad, True), build(pad, False)
    print(
        f"graph of {200 + pad:5} nodes, {len(routed.channels):5} channels: 200 steps joined by "
        f"conditional edges {timed(routed):5.2f} s, by plain edges {timed(plain):5.2f} s"
    )
