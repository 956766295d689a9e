#!/usr/bin/env python3
"""A small external workflow engine for cuga-flo, written with the official MCP Python SDK.

    engine.py [--host 127.0.0.1] [--port 0] [--journal-dir DIR]

Serves one MCP tool, `run_process`, over streamable HTTP at http://HOST:PORT/mcp and prints
`listening http://HOST:PORT/mcp` on stdout when ready. Arguments and result are cuga-flo's
(docs/bridge.md §5.7): {process_key, run_id, variables, bridge: {url, token}} -> {run_id,
status, message, variables, steps, path}, returned as structured content. For each call the
engine connects to `bridge.url` (cuga-flo's server, `serve --http`) as an MCP client, reads
`get_flow_annotations` and `get_bpmn_process`, and moves the tokens itself, asking the
harness (`execute_task`, `route_gateway`, `evaluate_hook`) for every judgement. It follows
the native engine (src/engine/native/mod.rs) as far as it goes:

Supported
- start events (process level: the none start events, else every start event), end events
  (a terminate end event ends the run `terminated`, inside a sub-process only that
  instance), intermediate events (pass through; a link throw jumps to its catch).
- tasks of every kind, call activities and inserted tasks -> `execute_task`.
- exclusive / event-based (exactly one flow) and inclusive / complex (one or more) gateways
  with >= 2 outgoing flows -> `route_gateway`; parallel gateways and single-flow gateways
  pass the token on (a split sends one along every flow). Parallel, inclusive and complex
  gateways with >= 2 incoming flows are joins: they fire once every incoming flow has a
  token or can no longer be reached by a live token of the same scope (dead-branch
  release). Exclusive merges pass each token on.
- embedded sub-processes, transactions, ad-hoc sub-processes (a scope of their own).
- hooks: `evaluate_hook` before a hooked flow is traversed; state updates first, then
  continue, skip_node, skip_to, terminate, swap_nodes, remove_node, add_node, each checked
  against the live topology first (an action that cannot apply becomes `continue`, its state
  updates dropped); `fail_run`; contexts carry `model` once the topology has changed.
- the step budget; a deadline on every call to the bridge (connect included).
- a journal in cuga-flo's event shape (§6.5) under --journal-dir, if given.

Failures: a run that cannot start (no bridge, unknown process key, bad run id) is a tool
error. Once started, a run always returns a result: a harness error, a refused answer, a
call past its deadline or a lost connection fails it with a message naming the control
point (§6.4), e.g. ``task `X` failed: no answer from the bridge within 120s``.

Not supported / simplifications
- Tokens move one at a time: a control-point call blocks the run (the branches of a split
  are not concurrent; they run in the order of their flows).
- Event sub-processes never start, boundary events never fire, timers do not wait,
  messages are not awaited (as in the native engine). <unsupported> elements fail the run.
- No retries; the engine's journal stays with the engine (the bridge has no tool for it).

Environment: CUGA_FLO_ENGINE_CALL_TIMEOUT (seconds, default 120) bounds every call to the
bridge; CUGA_FLO_ENGINE_CALL_DELAY_MS (default 0) sleeps before each control-point call
(tests use it to break the bridge mid-run). Logs go to stderr: one `engine: call ...` line
per control point and one `engine-stats {json}` line per run (latencies seen here).
"""

import argparse
import asyncio
import json
import os
import re
import socket
import sys
import time
import traceback
from collections import deque
from contextlib import asynccontextmanager
from typing import Any, Literal

import anyio
import httpx2
import uvicorn
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.exceptions import MCPError
from pydantic import BaseModel

CALL_TIMEOUT = float(os.environ.get("CUGA_FLO_ENGINE_CALL_TIMEOUT", "120"))
CALL_DELAY = float(os.environ.get("CUGA_FLO_ENGINE_CALL_DELAY_MS", "0")) / 1000.0
DEFAULT_STEP_BUDGET = 10000
RUN_ID = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}")
ACTIVITIES = ("task", "sub_process", "call_activity")
# How a run fails when a control point gets no answer (docs/bridge.md §6.4).
FAILS = {"execute_task": "task `{0}` failed", "route_gateway": "gateway `{0}` could not be routed",
         "evaluate_hook": "hook `{0}` on flow `{1}` could not be evaluated"}


def log(message: str) -> None:
    print(f"engine: {message}", file=sys.stderr, flush=True)


def describe(exc: BaseException) -> str:
    """One line per leaf exception (anyio wraps transport failures in groups)."""
    if isinstance(exc, BaseExceptionGroup):
        return "; ".join(describe(e) for e in exc.exceptions)
    if isinstance(exc, MCPError):
        return f"MCP error {exc.code}: {exc.error.message}"
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


class CallFailed(Exception):
    """A call to the bridge gave no answer: an error result, a timeout, a lost connection."""

    def __init__(self, message: str, calls: list | None = None) -> None:
        super().__init__(message)
        self.message, self.calls = message, calls or []


class Bridge:
    """One MCP session with cuga-flo's server; every call is bounded by CALL_TIMEOUT."""

    def __init__(self, session: ClientSession) -> None:
        self.session = session
        self.latencies: dict[str, list[float]] = {}

    async def call(self, tool: str, args: dict) -> dict:
        started = time.perf_counter()
        try:
            with anyio.fail_after(CALL_TIMEOUT):
                result = await self.session.call_tool(tool, args, read_timeout_seconds=CALL_TIMEOUT)
        except TimeoutError:
            raise CallFailed(f"no answer from the bridge within {CALL_TIMEOUT:g}s (`{tool}`)") from None
        except Exception as e:  # MCPError (JSON-RPC error, SDK timeout), transport errors
            raise CallFailed(f"`{tool}` over MCP failed: {describe(e)}") from None
        finally:
            self.latencies.setdefault(tool, []).append((time.perf_counter() - started) * 1000.0)
        text = "\n".join(c.text for c in result.content if getattr(c, "type", None) == "text")
        if result.is_error:  # a ControlPointError as JSON, else plain text (§3.1)
            try:
                error = json.loads(text)
                raise CallFailed(str(error["message"]), error.get("calls"))
            except (ValueError, KeyError, TypeError):
                raise CallFailed(text or f"`{tool}` failed without a message") from None
        data = result.structured_content
        if data is None:  # a peer that drops structured content
            try:
                data = json.loads(text)
            except ValueError:
                raise CallFailed(f"`{tool}` returned no structured content") from None
        return data


@asynccontextmanager
async def connect(url: str, token: str | None):
    headers = {"Authorization": f"Bearer {token}"} if token else None
    timeout = httpx2.Timeout(min(30.0, CALL_TIMEOUT), read=CALL_TIMEOUT)
    async with httpx2.AsyncClient(headers=headers, timeout=timeout) as http:
        async with streamable_http_client(url, http_client=http) as (read, write):
            async with ClientSession(read, write, read_timeout_seconds=CALL_TIMEOUT) as session:
                with anyio.fail_after(CALL_TIMEOUT):
                    await session.initialize()
                yield Bridge(session)


# --- The live topology -------------------------------------------------------------------


def camel(snake: str) -> str:
    head, *rest = snake.split("_")
    return head + "".join(w.capitalize() for w in rest)


class Node:
    def __init__(self, id: str, name, kind, parent=None, default_flow=None) -> None:
        # `kind` is cuga-flo's tagged object: {"task": "user"}, {"gateway": "parallel"}, ...
        self.family, self.detail = next(iter(kind.items())) if isinstance(kind, dict) else (kind, None)
        self.id, self.name, self.parent, self.default_flow = id, name, parent, default_flow

    @property
    def tag(self) -> str:
        """The BPMN local name, as ModelSummary.nodes[].kind spells it."""
        f, d = self.family, self.detail
        if f == "task":
            return "task" if d == "task" else camel(d) + "Task"
        if f == "gateway":
            return camel(d) + "Gateway"
        if f == "sub_process":
            return {"transaction": "transaction", "ad_hoc": "adHocSubProcess"}.get(d, "subProcess") \
                if isinstance(d, str) else "subProcess"
        if f == "unsupported":
            return d.get("tag", "unsupported")
        return camel(f)

    @property
    def defs(self) -> list:
        return self.detail.get("definitions", []) if isinstance(self.detail, dict) else []

    @property
    def event_subprocess(self) -> bool:
        return self.family == "sub_process" and isinstance(self.detail, dict) and \
            self.detail.get("embedded", {}).get("triggered_by_event", False)

    @property
    def enterable(self) -> bool:  # what skip_to may jump to
        return self.family not in ("start_event", "boundary_event") and not self.event_subprocess


class Topology:
    def __init__(self, process: dict) -> None:
        self.process_id, self.process_name = process.get("id"), process.get("name")
        self.nodes = {n["id"]: Node(n["id"], n.get("name"), n["kind"], n.get("parent"), n.get("default_flow"))
                      for n in process.get("nodes", [])}
        self.flows = {}
        for f in process.get("flows", []):
            body = (f.get("condition") or {}).get("body") or ""
            self.flows[f["id"]] = {"id": f["id"], "name": f.get("name"), "source": f["source"],
                                   "target": f["target"], "condition": body.strip() or None,
                                   "parent": f.get("parent")}
        self.changed = False

    def outgoing(self, node: str) -> list:
        return [f for f in self.flows.values() if f["source"] == node]

    def incoming(self, node: str) -> list:
        return [f for f in self.flows.values() if f["target"] == node]

    def is_sync_join(self, node: Node) -> bool:
        return node.family == "gateway" and node.detail in ("parallel", "inclusive", "complex") \
            and len(self.incoming(node.id)) >= 2

    @staticmethod
    def edge(f: dict) -> dict:
        return {k: f[k] for k in ("id", "source", "target", "name", "condition")}

    def summary(self) -> dict:
        return {"process_id": self.process_id, "process_name": self.process_name,
                "nodes": [{"id": n.id, "kind": n.tag, "name": n.name} for n in self.nodes.values()],
                "flows": [self.edge(f) for f in self.flows.values()]}

    def start_nodes(self, scope) -> list:
        children = [n for n in self.nodes.values() if n.parent == scope]
        starts = [n for n in children if n.family == "start_event"]
        none = [n.id for n in starts if not n.defs]
        if none or starts or scope is None:
            return none or [n.id for n in starts]
        return [n.id for n in children if n.enterable and not self.incoming(n.id)
                and not (n.family == "intermediate_catch_event" and "link" in n.defs)]

    def link_catch(self, throw: Node):
        return next((n for n in self.nodes.values() if n.family == "intermediate_catch_event"
                     and "link" in n.defs and n.parent == throw.parent and n.name == throw.name), None)

    def reachable_flows(self, nodes: list, flows: list) -> set:
        """Every flow a token at `nodes` or about to traverse `flows` could still take."""
        reached, queue, seen = set(flows), list(nodes) + [self.flows[f]["target"] for f in flows], set()
        while queue:
            node = queue.pop()
            if node in seen:
                continue
            seen.add(node)
            for f in self.outgoing(node):
                reached.add(f["id"])
                queue.append(f["target"])
            n = self.nodes.get(node)
            if n and n.family == "intermediate_throw_event" and "link" in n.defs and self.link_catch(n):
                queue.append(self.link_catch(n).id)
        return reached

    # Hook actions that change the topology (checked by Run.plan first).
    def swap(self, a: str, b: str) -> None:
        for f in self.flows.values():
            for end in ("source", "target"):
                f[end] = {a: b, b: a}.get(f[end], f[end])
        self.changed = True

    def remove(self, x: str) -> None:
        out = self.outgoing(x)[0]
        for f in self.flows.values():
            if f["target"] == x and f["id"] != out["id"]:
                f["target"] = out["target"]
        gone, grew = {x}, True
        while grew:  # the node, everything nested in it or attached to it
            more = {n.id for n in self.nodes.values() if n.id not in gone and (n.parent in gone or (
                n.family == "boundary_event" and (n.detail or {}).get("attached_to") in gone))}
            gone |= more
            grew = bool(more)
        self.nodes = {k: n for k, n in self.nodes.items() if k not in gone}
        self.flows = {k: f for k, f in self.flows.items()
                      if k != out["id"] and f["source"] not in gone and f["target"] not in gone}
        self.changed = True

    def insert_on(self, flow: str, task: dict) -> None:
        f, new = self.flows[flow], f"{flow}__then__{task['id']}"
        target = self.nodes.get(f["target"])
        self.nodes[task["id"]] = Node(task["id"], task.get("name") or task["id"], {"task": "task"},
                                      target.parent if target else f["parent"])
        self.flows[new] = {"id": new, "name": None, "source": task["id"], "target": f["target"],
                           "condition": None, "parent": f["parent"]}
        f["target"] = task["id"]
        self.changed = True


# --- One run -----------------------------------------------------------------------------


class Run:
    """Tokens move one step at a time from a FIFO queue of steps; control-point calls are
    awaited where they are made. Steps: ("traverse", token, flow, hook_done), ("arrive",
    token, node, via), ("enter", token, node), ("skip", token, node, reason), ("leave",
    token, node)."""

    def __init__(self, bridge: Bridge, process_key: str, run_id: str, variables: dict,
                 process: dict, annotations: dict) -> None:
        self.bridge, self.process_key, self.run_id = bridge, process_key, run_id
        self.topo = Topology(process)
        self.hooks: dict = annotations.get("hooks") or {}
        self.budget = annotations.get("step_budget") or DEFAULT_STEP_BUDGET
        self.vars = {**(annotations.get("variables") or {}), **variables}
        self.path: list[str] = []
        self.executed: list[str] = []
        self.inserted: dict[str, dict] = {}
        # id -> {"scope", "at": (where, id)}: "flow" before its hook, "via" taken and arriving,
        # "node" at (or entering) a node, "join" waiting at a join.
        self.tokens: dict[int, dict] = {}
        self.scopes: dict[int, tuple] = {}  # sub-process instance -> (its token, sub-process id)
        self.joins: dict[tuple, dict] = {}  # (scope, join) -> {via flow: [tokens]}
        self.ready: deque = deque()
        self.end: tuple | None = None
        self.calling: str | None = None  # the control-point call in flight (see `ask`)
        self.last_id = 0
        self.events: list[dict] = []

    # Record and outcome.
    def emit(self, event: str, **fields) -> None:
        self.events.append({"seq": len(self.events) + 1, "at_ms": int(time.time() * 1000),
                            "event": event, **fields})

    def model_calls(self, node: str, calls) -> None:
        for call in calls or []:
            self.emit("model_called", node=node, **call)

    def fail(self, message: str) -> None:
        self.end = self.end or ("failed", message)

    def terminate(self, message: str) -> None:
        self.end = self.end or ("terminated", message)

    def result(self) -> dict:
        status, message = self.end or ("completed", None)
        self.emit("run_finished", status=status, message=message, variables=self.vars, steps=len(self.path))
        return {"run_id": self.run_id, "status": status, "message": message,
                "variables": self.vars, "steps": len(self.path), "path": self.path}

    # Tokens.
    def add_token(self, scope: int, at: tuple) -> int:
        self.last_id += 1
        self.tokens[self.last_id] = {"scope": scope, "at": at}
        return self.last_id

    def place(self, token: int, kind: str, where: str) -> None:
        self.tokens[token]["at"] = (kind, where)

    def held(self) -> set:
        """The nodes holding a token (at them, waiting at them, or arriving at them)."""
        at = [t["at"] for t in self.tokens.values()]
        return {w for k, w in at if k in ("node", "join")} | \
            {self.topo.flows[w]["target"] for k, w in at if k == "via" and w in self.topo.flows}

    async def drive(self) -> None:
        self.emit("run_started", run_id=self.run_id, app=self.process_key, process_key=self.process_key,
                  process_id=self.topo.process_id, engine="python", reasoner="", variables=dict(self.vars))
        bad = next((n for n in self.topo.nodes.values() if n.family == "unsupported"), None)
        starts = self.topo.start_nodes(None)
        if bad:
            self.fail(f"`{bad.id}` is a <{bad.tag}>, which this engine cannot run")
        elif not starts:
            self.fail("the process has no start event at process level")
        for node in starts:
            self.ready.append(("enter", self.add_token(0, ("node", node)), node))
        while self.end is None:
            if self.ready:
                step = self.ready.popleft()
                if step[1] in self.tokens:
                    await getattr(self, step[0])(*step[1:])
            elif not self.release_joins():
                if self.tokens:
                    self.fail(self.stuck_message())
                return

    # Context of a control point (§4).
    def ctx(self, element_id: str, name, **extra) -> dict:
        c = {"run_id": self.run_id, "process_key": self.process_key, "element_id": element_id,
             "element_name": name, "variables": dict(self.vars), "history": list(self.path),
             "instruction": None}
        if self.topo.changed:  # §4.2: the live topology is no longer the registered one
            c["model"] = self.topo.summary()
        return {**c, **extra}

    async def ask(self, tool: str, id_key: str, element: str, ctx: dict) -> dict:
        log(f"call {tool} {element} (run {self.run_id})")
        if CALL_DELAY:
            await anyio.sleep(CALL_DELAY)
        # How the run fails if the connection is lost during the call (which cancels it).
        self.calling = FAILS[tool].format(element, (ctx.get("edge") or {}).get("id"))
        try:
            answer = await self.bridge.call(tool, {id_key: element, "ctx": ctx})
        except CallFailed as e:
            self.calling = None
            self.model_calls(element, e.calls)
            raise
        self.calling = None
        self.model_calls(element, answer.get("calls"))
        return answer

    # Steps.
    async def traverse(self, token: int, flow: str, hook_done: bool) -> None:
        f = self.topo.flows.get(flow)
        if f is None:
            return self.fail(f"sequence flow `{flow}` no longer exists")
        self.place(token, "flow", flow)
        if not hook_done and flow in self.hooks:
            return await self.hook(token, f, self.hooks[flow])
        self.emit("flow_taken", flow=flow, source=f["source"], target=f["target"], token=token)
        # Until it arrives, the token still counts as on the flow: a join reached by two
        # tokens in a row must see the second one coming (see `awaited`).
        self.place(token, "via", flow)
        self.ready.append(("arrive", token, f["target"], flow))

    async def arrive(self, token: int, node: str, via) -> None:
        n = self.topo.nodes.get(node)
        if n is None:
            return self.fail(f"node `{node}` no longer exists")
        if not self.topo.is_sync_join(n):
            return await self.enter(token, node)
        scope = self.tokens[token]["scope"]
        self.place(token, "join", node)
        self.joins.setdefault((scope, node), {}).setdefault(via, []).append(token)
        self.try_fire(scope, node)

    def record_entry(self, token: int, n: Node) -> bool:
        if len(self.path) >= self.budget:
            self.fail(f"the step budget of {self.budget} node entries is spent: "
                      f"entering `{n.id}` would exceed it")
            return False
        self.emit("node_entered", node=n.id, kind=n.tag, name=n.name, token=token)
        self.path.append(n.id)
        if n.id not in self.executed:
            self.executed.append(n.id)
        return True

    async def enter(self, token: int, node: str) -> None:
        n = self.topo.nodes.get(node)
        if n is None:
            return self.fail(f"node `{node}` no longer exists")
        self.place(token, "node", node)
        if not self.record_entry(token, n):
            return
        if n.family in ("task", "call_activity"):
            await self.task(token, n)
        elif n.family == "sub_process" and not n.event_subprocess:
            self.start_scope(token, n)
        elif n.family == "intermediate_throw_event" and "link" in n.defs:
            catch = self.topo.link_catch(n)
            if catch is None:
                return self.fail(f"link throw event `{n.id}` has no link catch event with the same name in its scope")
            self.place(token, "node", catch.id)
            self.ready.append(("enter", token, catch.id))
        elif n.family == "end_event":
            self.terminate_end(token, n) if "terminate" in n.defs else self.end_token(token)
        elif n.family == "gateway" and n.detail != "parallel" and len(self.topo.outgoing(n.id)) >= 2:
            await self.gateway(token, n)
        else:  # start and intermediate events, event sub-processes, passing gateways
            await self.leave(token, node)

    async def skip(self, token: int, node: str, reason) -> None:
        n = self.topo.nodes.get(node)
        if n is None:
            return self.fail(f"node `{node}` no longer exists")
        if self.record_entry(token, n):
            self.emit("task_finished", node=node, status="skipped", outputs={}, variables={},
                      decided_by=reason[0], reason=reason[1], error=None, duration_ms=0)
            await self.leave(token, node)

    async def leave(self, token: int, node: str) -> None:
        self.send(token, [f["id"] for f in self.topo.outgoing(node)])

    def send(self, token: int, flows: list) -> None:
        if not flows:
            return self.end_token(token)
        if len(flows) == 1:
            self.place(token, "flow", flows[0])
            return self.ready.append(("traverse", token, flows[0], False))
        scope = self.tokens.pop(token)["scope"]
        for flow in flows:  # a split: one new token per flow
            self.ready.append(("traverse", self.add_token(scope, ("flow", flow)), flow, False))

    def end_token(self, token: int) -> None:
        ended = self.tokens.pop(token, None)
        if ended and ended["scope"] and not any(t["scope"] == ended["scope"] for t in self.tokens.values()):
            self.complete_scope(ended["scope"])

    # Sub-processes.
    def start_scope(self, token: int, n: Node) -> None:
        starts = self.topo.start_nodes(n.id)
        if not starts:
            return self.send(token, [f["id"] for f in self.topo.outgoing(n.id)])
        self.last_id += 1
        scope = self.last_id
        self.scopes[scope] = (token, n.id)
        for start in starts:
            self.ready.append(("enter", self.add_token(scope, ("node", start)), start))

    def complete_scope(self, scope: int) -> None:
        self.joins = {k: v for k, v in self.joins.items() if k[0] != scope}
        token, subprocess = self.scopes.pop(scope)
        self.ready.append(("leave", token, subprocess))

    def terminate_end(self, token: int, n: Node) -> None:
        scope = self.tokens[token]["scope"]
        if scope == 0:
            return self.terminate(f"terminate end event {n.id}")
        nested, grew = {scope}, True
        while grew:  # the instance and every instance started inside it
            more = {s for s, (t, _) in self.scopes.items() if s not in nested
                    and t in self.tokens and self.tokens[t]["scope"] in nested}
            nested |= more
            grew = bool(more)
        self.tokens = {k: t for k, t in self.tokens.items() if t["scope"] not in nested}
        self.joins = {k: v for k, v in self.joins.items() if k[0] not in nested}
        for s in nested - {scope}:
            self.scopes.pop(s, None)
        self.complete_scope(scope)

    # Joins.
    def try_fire(self, scope: int, join: str) -> bool:
        state = self.joins.get((scope, join))
        if not state or self.awaited(scope, join, state):
            return False
        consumed = [q.pop(0) for q in state.values() if q]
        self.joins[(scope, join)] = state = {k: q for k, q in state.items() if q}
        if not state:
            del self.joins[(scope, join)]
        for t in consumed:
            self.tokens.pop(t, None)
        self.ready.append(("enter", self.add_token(scope, ("node", join)), join))
        return True

    def awaited(self, scope: int, join: str, state: dict) -> list:
        missing = [f["id"] for f in self.topo.incoming(join) if not state.get(f["id"])]
        if not missing:
            return []
        others = [t["at"] for t in self.tokens.values() if t["scope"] == scope and t["at"] != ("join", join)]
        on_flows = [w for k, w in others if k in ("flow", "via") and w in self.topo.flows]
        reachable = self.topo.reachable_flows([w for k, w in others if k in ("node", "join")], on_flows)
        return [f for f in missing if f in reachable]

    def release_joins(self) -> bool:
        return any([self.try_fire(scope, join) for scope, join in list(self.joins)])

    def stuck_message(self) -> str:
        joins = [f"`{j}` (waiting for {', '.join(self.awaited(s, j, st))})" for (s, j), st in self.joins.items()]
        if joins:
            return f"the run is stuck: join {', '.join(joins)} can never fire"
        return f"the run is stuck: tokens remain ({list(self.tokens.values())}) but none can move"

    # Control points.
    async def task(self, token: int, n: Node) -> None:
        ctx = self.ctx(n.id, n.name)
        if n.id in self.inserted:
            ctx["instruction"] = self.inserted[n.id].get("instruction")
        started = time.perf_counter()
        try:
            out = await self.ask("execute_task", "task_id", n.id, ctx)
        except CallFailed as e:
            return self.fail(f"task `{n.id}` failed: {e.message}")
        self.emit("task_finished", node=n.id, **{k: out.get(k) for k in (
            "status", "outputs", "variables", "decided_by", "reason", "error", "digest")},
            duration_ms=int((time.perf_counter() - started) * 1000))
        if out.get("status") == "failed":
            return self.fail(f"task `{n.id}` failed: {out.get('error') or 'no reason given'}")
        self.vars.update(out.get("variables") or {})
        await self.leave(token, n.id)

    async def gateway(self, token: int, n: Node) -> None:
        offered = self.topo.outgoing(n.id)
        options = [{"id": f["id"], "target": f["target"], "name": f["name"], "condition": f["condition"],
                    "decision": None, "is_default": f["id"] == n.default_flow} for f in offered]
        started = time.perf_counter()
        try:
            d = await self.ask("route_gateway", "gateway_id", n.id, self.ctx(n.id, n.name, flows=options))
            chosen = d.get("flows") or []
            ids = [f["id"] for f in offered]
            if not chosen or any(c not in ids for c in chosen) or len(set(chosen)) != len(chosen):
                raise CallFailed(f"the answer {chosen} does not name distinct outgoing flows of {ids}")
            if n.detail in ("exclusive", "event_based") and len(chosen) != 1:
                raise CallFailed(f"an {n.tag} takes exactly one flow, the answer names {chosen}")
        except CallFailed as e:
            return self.fail(f"gateway `{n.id}` could not be routed: {e.message}")
        self.emit("gateway_routed", node=n.id, flows=chosen, decided_by=d.get("decided_by"),
                  reason=d.get("reason"), duration_ms=int((time.perf_counter() - started) * 1000))
        self.send(token, chosen)

    async def hook(self, token: int, f: dict, hook: str) -> None:
        ctx = self.ctx(hook, None, edge=self.topo.edge(f), executed=list(self.executed))
        started = time.perf_counter()
        try:
            d = await self.ask("evaluate_hook", "hook_id", hook, ctx)
        except CallFailed as e:
            return self.fail(f"hook `{hook}` on flow `{f['id']}` could not be evaluated: {e.message}")
        action = d.get("action")
        record = dict(hook=hook, flow=f["id"], decided_by=d.get("decided_by"), reason=d.get("reason"),
                      message=d.get("message"), denied=d.get("denied"),
                      duration_ms=int((time.perf_counter() - started) * 1000), digest=d.get("digest"))
        if d.get("fail_run"):
            self.emit("hook_evaluated", action=action, target=d.get("target"), swap=d.get("swap"),
                      added=(d.get("add") or {}).get("id"), state_updates={}, rejected=None, **record)
            return self.fail(d.get("message") or f"hook `{hook}` on flow `{f['id']}` failed the run")
        rejected = self.plan(d, f)
        if rejected:
            action = "continue"
        updates = {} if rejected else (d.get("state_updates") or {})
        if updates:
            self.emit("variables_set", source=f"hook {hook}", values=updates)
            self.vars.update(updates)
        swap, add = d.get("swap"), d.get("add")
        target = f["target"] if action == "skip_node" else d.get("target")
        self.emit("hook_evaluated", action=action, rejected=rejected, state_updates=updates,
                  target=target if action in ("skip_node", "skip_to", "remove_node") else None,
                  swap=swap if action == "swap_nodes" else None,
                  added=add["id"] if action == "add_node" else None, **record)
        if action in ("swap_nodes", "remove_node", "add_node"):
            self.emit("topology_changed", action=action, detail=f"{action} {swap or target or add['id']} on `{f['id']}`")
            if action == "swap_nodes":
                self.topo.swap(*swap)
            elif action == "remove_node":
                self.topo.remove(target)
            else:
                self.topo.insert_on(f["id"], add)
                self.inserted[add["id"]] = add
        if action == "terminate":
            self.terminate(d.get("message") or f"terminated by hook {hook}")
        elif action == "skip_node":
            self.emit("flow_taken", flow=f["id"], source=f["source"], target=target, token=token)
            self.place(token, "node", target)
            self.ready.append(("skip", token, target, (d.get("decided_by"), d.get("reason"))))
        elif action == "skip_to":
            self.place(token, "node", target)
            self.ready.append(("arrive", token, target, None))
        else:  # continue, or a topology change: take F as it is now
            self.ready.append(("traverse", token, f["id"], True))

    def plan(self, d: dict, f: dict):
        """Why the decision's action cannot apply to the live state (None: it can)."""
        action, topo, executed = d.get("action"), self.topo, set(self.executed)

        def untouched(x) -> str | None:  # an activity that has not run and holds no token
            n = topo.nodes.get(x)
            if n is None:
                return f"`{x}` is not a node of the process"
            if n.family not in ACTIVITIES:
                return f"`{x}` is a {n.tag}, not an activity"
            if x in executed:
                return f"`{x}` has already been entered in this run"
            return f"a token is at `{x}`" if x in self.held() else None

        why = None
        if action in ("continue", "terminate"):
            return None
        elif action == "skip_node":
            why = untouched(f["target"])
        elif action == "skip_to":
            x, edge_target = d.get("target"), topo.nodes.get(f["target"])
            n = topo.nodes.get(x) if x else None
            why = ("no target node given" if not x else f"`{x}` is not a node of the process" if n is None
                   else f"`{x}` is not in the same scope as `{f['target']}`"
                   if edge_target is None or n.parent != edge_target.parent
                   else f"`{x}` is a {n.tag}, which only an event can start" if not n.enterable
                   else f"`{x}` has already been entered in this run" if x in executed else None)
        elif action == "swap_nodes":
            pair = d.get("swap") or []
            why = ("no pair of nodes given" if len(pair) != 2 else f"`{pair[0]}` cannot be swapped with itself"
                   if pair[0] == pair[1] else untouched(pair[0]) or untouched(pair[1]) or (
                       f"`{pair[0]}` and `{pair[1]}` are not in the same scope"
                       if topo.nodes[pair[0]].parent != topo.nodes[pair[1]].parent else None))
        elif action == "remove_node":
            x = d.get("target")
            out = topo.outgoing(x) if x else []
            why = ("no node to remove given" if not x else untouched(x) or (
                None if len(out) == 1 and out[0]["target"] != x
                else f"`{x}` must have exactly one outgoing flow, to another node"))
        elif action == "add_node":
            task = d.get("add") or {}
            new_flow = f"{f['id']}__then__{task.get('id')}"
            why = ("no task to insert given" if not (task.get("id") or "").strip()
                   else f"`{task['id']}` already exists in the process"
                   if task["id"] in topo.nodes or task["id"] in topo.flows
                   else f"`{new_flow}` already exists in the process" if new_flow in topo.flows else None)
        else:
            return f"unknown action `{action}`: this engine applies continue instead"
        return f"{action} refused: {why}" if why else None


# --- The MCP server ----------------------------------------------------------------------


class BridgeEndpoint(BaseModel):
    url: str
    token: str | None = None


class RunProcessResult(BaseModel):
    run_id: str
    status: Literal["completed", "terminated", "failed"]
    message: str | None
    variables: dict[str, Any]
    steps: int
    path: list[str]


def build_server(journal_dir: str | None) -> MCPServer:
    server = MCPServer("cuga-flo-python-engine", log_level="WARNING")

    @server.tool(description="Run a registered process to its end on this engine; control points are "
                             "asked of the harness at `bridge.url`.")
    async def run_process(process_key: str, run_id: str, variables: dict[str, Any] | None = None,
                          bridge: BridgeEndpoint | None = None) -> RunProcessResult:
        if bridge is None:
            raise ToolError("this engine needs `bridge`: {url, token?} of cuga-flo's MCP server")
        if not RUN_ID.fullmatch(run_id):  # it names the run's journal folder
            raise ToolError(f"invalid run id {run_id!r}: 1 to 128 of [A-Za-z0-9._-], not starting with `.`")
        started, run, refused = time.perf_counter(), None, None
        try:
            async with connect(bridge.url, bridge.token) as b:
                # The engine cannot run at all without these two: their failures are tool
                # errors (raised below: raised in here, the SDK's task group would wrap them).
                try:
                    annotations = await b.call("get_flow_annotations", {"process_key": process_key})
                    process = (await b.call("get_bpmn_process", {"process_key": process_key}))["process"]
                except (CallFailed, KeyError) as e:
                    refused = f"cannot start run `{run_id}`: {getattr(e, 'message', repr(e))}"
                else:
                    run = Run(b, process_key, run_id, variables or {}, process, annotations)
                    try:
                        await run.drive()
                    except Exception as e:  # a defect of this engine, not of the bridge
                        log(f"run {run_id}: {traceback.format_exc()}")
                        run.fail(f"the engine failed: {describe(e)}")
        except Exception as e:  # the connection broke (the SDK's task group failed), or never came up
            if run is not None:
                lost = f"the connection to the bridge at {bridge.url} was lost: {describe(e)}"
                run.fail(f"{run.calling}: {lost}" if run.calling else lost)
            elif refused is None:
                raise ToolError(f"cannot reach the bridge at {bridge.url}: {describe(e)}") from None
        if refused is not None:
            raise ToolError(refused)
        result = run.result()
        stats = {tool: {"n": len(ms), "mean_ms": round(sum(ms) / len(ms), 2), "max_ms": round(max(ms), 2),
                        "p50_ms": round(sorted(ms)[len(ms) // 2], 2)} for tool, ms in b.latencies.items()}
        print("engine-stats " + json.dumps({"run_id": run_id, "status": result["status"],
              "wall_ms": round((time.perf_counter() - started) * 1000, 1), "calls": stats}),
              file=sys.stderr, flush=True)
        if journal_dir:
            os.makedirs(os.path.join(journal_dir, run_id), exist_ok=True)
            with open(os.path.join(journal_dir, run_id, "journal.jsonl"), "w") as out:
                out.writelines(json.dumps(e, default=str) + "\n" for e in run.events)
        return RunProcessResult(**result)

    return server


async def serve(host: str, port: int, journal_dir: str | None) -> None:
    app = build_server(journal_dir).streamable_http_app(host=host)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    task = asyncio.create_task(server.serve(sockets=[sock]))
    while not server.started and not task.done():
        await asyncio.sleep(0.01)
    if server.started:
        print(f"listening http://{host}:{sock.getsockname()[1]}/mcp", flush=True)
    await task


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0: any free port")
    parser.add_argument("--journal-dir", help="write DIR/<run_id>/journal.jsonl for every run")
    args = parser.parse_args()
    asyncio.run(serve(args.host, args.port, args.journal_dir))


if __name__ == "__main__":
    main()
