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
- tasks of every kind, call activities and inserted tasks -> `execute_task` (under
  `cuga-flo start`, a call activity's is answered by running the called process as a
  child run, docs/bridge.md §12.2); the call waits
  its turn in the queue (tokens that need no call move first, as natively calls overlap).
  Each call carries its `idempotency_key` (`<run>:<element>:<visit>`).
- BPMN errors and escalations: a failed task (`failed`: its `error_code`, else TASK_FAILED;
  a ControlPointError: UNANSWERED), error and escalation end events and escalation throw
  events throw outwards to boundary events (by code, else catch-all; interrupting or not)
  and event sub-processes, as src/engine/native/throws.rs; an uncaught error fails the run
  with the native engine's message, an uncaught escalation passes.
- event sub-processes (error, escalation, message, signal, zero-duration timer starts;
  interrupting or not), armed while their scope runs.
- multi-instance activities (tasks, call activities, sub-processes; parallel or
  sequential; collection or cardinality, completion condition, output collection). Their
  expressions are evaluated here with the subset in `evaluate` (variables, literals,
  comparisons, arithmetic, and/or/not in JUEL `${...}` or FEEL `= ...`); anything else
  fails the run, naming the expression.
- messages and signals thrown within the run reach its catches (catch events, boundary
  events, event-based gateways, event sub-process starts); zero-duration timers fire once
  nothing else can move.
- the records cuga-flo cannot derive (docs/bridge.md §12.2): `event_thrown`,
  `message_received`, `node_entered` with a multi-instance `instance`, sent with the next
  context or the result.
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
- A run cannot park (docs/bridge.md §13): one that can only wait for a message or signal
  from outside, or a timer that is not due at once, fails naming what it waits for.
  <unsupported> elements fail the run. A receive task waits for its message (as natively).
- No retries; the engine's journal stays with the engine (the bridge has no tool for it).

Environment: CUGA_FLO_ENGINE_CALL_TIMEOUT (seconds, default 120) bounds every call to the
bridge; CUGA_FLO_ENGINE_CALL_DELAY_MS (default 0) sleeps before each control-point call
(tests use it to break the bridge mid-run). Logs go to stderr: one `engine: call ...` line
per control point and one `engine-stats {json}` line per run (latencies seen here).
"""

import argparse
import ast
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

    def __init__(self, message: str, calls: list | None = None, refused: bool = False) -> None:
        super().__init__(message)
        self.message, self.calls = message, calls or []
        # The harness answered with an error (a ControlPointError), the bridge being fine.
        self.refused = refused


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
                failed = CallFailed(str(error["message"]), error.get("calls"), refused=True)
            except (ValueError, KeyError, TypeError):
                raise CallFailed(text or f"`{tool}` failed without a message", refused=True) from None
            raise failed
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


# --- Expressions ---------------------------------------------------------------------------


class Unevaluable(Exception):
    """An expression this engine cannot evaluate (or whose variables are not set)."""


FEEL_EQ = re.compile(r"(?<![<>!=])=(?!=)")
JUEL_NOT = re.compile(r"!(?!=)")
CONSTANTS = {"true": True, "false": False, "null": None}


def unwrap(expr: str) -> tuple[str, str]:
    """(body, dialect) of `${...}` / `#{...}` (JUEL), `= ...` (FEEL) or a bare expression."""
    text = (expr or "").strip()
    if text[:2] in ("${", "#{") and text.endswith("}"):
        return text[2:-1].strip(), "juel"
    if text.startswith("="):
        return text[1:].strip(), "feel"
    return text, "juel"


def simple_name(expr) -> str | None:
    body = unwrap(expr)[0] if expr else ""
    return body if body.isidentifier() else None


def evaluate(expr: str, variables: dict):
    """The subset of JUEL and FEEL the native engine's completion conditions, cardinalities,
    collections and output elements use: variables (and `a.b`, `a[0]`), literals, `==`,
    `!=`, `<`, `<=`, `>`, `>=`, `+ - * / %`, `&&`/`and`, `||`/`or`, `!`/`not`. Anything
    else is refused (Unevaluable), never guessed."""
    body, dialect = unwrap(expr)
    if dialect == "feel":
        body = FEEL_EQ.sub("==", body).replace("not(", "not (")
    else:
        body = JUEL_NOT.sub(" not ", body.replace("&&", " and ").replace("||", " or "))
    try:
        tree = ast.parse(body, mode="eval")
    except SyntaxError:
        raise Unevaluable(f"`{expr}` is not an expression this engine evaluates") from None
    return _eval(tree.body, variables, expr)


def _eval(node, v: dict, expr: str):
    ops = {ast.Eq: lambda a, b: a == b, ast.NotEq: lambda a, b: a != b, ast.Lt: lambda a, b: a < b,
           ast.LtE: lambda a, b: a <= b, ast.Gt: lambda a, b: a > b, ast.GtE: lambda a, b: a >= b,
           ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
           ast.Div: lambda a, b: a / b, ast.Mod: lambda a, b: a % b}
    try:
        if isinstance(node, ast.Constant) and isinstance(node.value, (str, int, float)):
            return node.value
        if isinstance(node, ast.Name):
            if node.id in v:
                return v[node.id]
            if node.id in CONSTANTS:
                return CONSTANTS[node.id]
            raise Unevaluable(f"`{expr}`: the variable `{node.id}` is not set")
        if isinstance(node, ast.Attribute) and isinstance(base := _eval(node.value, v, expr), dict):
            if node.attr in base:
                return base[node.attr]
            raise Unevaluable(f"`{expr}`: `{node.attr}` is not set")
        if isinstance(node, ast.Subscript):
            return _eval(node.value, v, expr)[_eval(node.slice, v, expr)]
        if isinstance(node, ast.List):
            return [_eval(e, v, expr) for e in node.elts]
        if isinstance(node, ast.BoolOp):
            values = [_eval(e, v, expr) for e in node.values]
            return all(x is True for x in values) if isinstance(node.op, ast.And) else any(x is True for x in values)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            return not _eval(node.operand, v, expr)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return -_eval(node.operand, v, expr)
        if isinstance(node, ast.BinOp) and type(node.op) in ops:
            return ops[type(node.op)](_eval(node.left, v, expr), _eval(node.right, v, expr))
        if isinstance(node, ast.Compare):
            left = _eval(node.left, v, expr)
            for op, right_node in zip(node.ops, node.comparators):
                right = _eval(right_node, v, expr)
                if type(op) not in ops or not ops[type(op)](left, right):
                    return False if type(op) in ops else _refuse(expr)
                left = right
            return True
    except (TypeError, KeyError, IndexError, ZeroDivisionError) as e:
        raise Unevaluable(f"`{expr}` could not be evaluated: {e}") from None
    return _refuse(expr)


def _refuse(expr: str):
    raise Unevaluable(f"`{expr}` uses what this engine does not evaluate")


# --- The live topology -------------------------------------------------------------------


def camel(snake: str) -> str:
    head, *rest = snake.split("_")
    return head + "".join(w.capitalize() for w in rest)


class Node:
    def __init__(self, id: str, name, kind, parent=None, default_flow=None, raw: dict | None = None) -> None:
        # `kind` is cuga-flo's tagged object: {"task": "user"}, {"gateway": "parallel"}, ...
        self.family, self.detail = next(iter(kind.items())) if isinstance(kind, dict) else (kind, None)
        self.id, self.name, self.parent, self.default_flow = id, name, parent, default_flow
        raw = raw or {}
        # An error or escalation event's reference ({reference, code, name}), a message's
        # or signal's ({reference, name}); the loop characteristics; a timer's definition.
        self.event_ref = raw.get("event_ref")
        self.looping = raw.get("looping")
        self.timer = raw.get("timer")

    @property
    def multi(self):
        """(spec, sequential) of a multi-instance activity, else None."""
        kind = (self.looping or {}).get("kind")
        if isinstance(kind, dict) and "multi_instance" in kind:
            return self.looping.get("multi") or {}, bool(kind["multi_instance"].get("sequential"))
        return None

    @property
    def code(self):
        return (self.event_ref or {}).get("code")

    @property
    def catch_name(self) -> str:
        """A message's or signal's name: the referenced element's name, else the reference,
        else the element's name, else its id (as the native engine names them)."""
        r = self.event_ref or {}
        return r.get("name") or r.get("reference") or self.name or self.id

    @property
    def zero_timer(self) -> bool:
        t = self.timer or {}
        expr = (t.get("expression") or "").strip().upper()
        return str(t.get("kind")).lower() == "duration" and expr.startswith("P") and not re.search(r"[1-9]", expr)

    @property
    def interrupting(self) -> bool:
        if self.family == "boundary_event":
            return bool(self.detail.get("cancel_activity", True))
        if self.family == "start_event":
            return bool(self.detail.get("interrupting", True))
        return True

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
        self.nodes = {n["id"]: Node(n["id"], n.get("name"), n["kind"], n.get("parent"), n.get("default_flow"), n)
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

    def boundary_events(self, activity: str) -> list:
        return [n for n in self.nodes.values() if n.family == "boundary_event"
                and (n.detail or {}).get("attached_to") == activity]

    def catching_boundary(self, activity: str, definition: str, code):
        """The boundary event of `activity` catching `code`: one naming it, else a catch-all."""
        attached = [n for n in self.boundary_events(activity) if definition in n.defs]
        return next((n for n in attached if code is not None and n.code == code), None) or \
            next((n for n in attached if n.code is None), None)

    def event_subprocesses(self, container) -> list:
        """(event sub-process, its start event) of the scope `container` (None: the process)."""
        found = []
        for n in self.nodes.values():
            if n.parent == container and n.event_subprocess:
                start = next((c for c in self.nodes.values() if c.parent == n.id and c.family == "start_event"), None)
                if start is not None:
                    found.append((n, start))
        return found

    def catching_event_subprocess(self, container, definition: str, code):
        candidates = [(e, st) for e, st in self.event_subprocesses(container) if definition in st.defs]
        return next(((e, st) for e, st in candidates if code is not None and st.code == code), None) or \
            next(((e, st) for e, st in candidates if st.code is None), None)

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
    token, node), ("work", token, node) (a multi-instance instance entered already)."""

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
        # "node" at (or entering) a node, "join" waiting at a join, "wait" at a catch
        # waiting for a message, signal or timer; an instance of a multi-instance activity
        # also has "mi" (its body's token), "index" and "locals".
        self.tokens: dict[int, dict] = {}
        self.scopes: dict[int, tuple] = {}  # sub-process instance -> (its token, sub-process id)
        self.joins: dict[tuple, dict] = {}  # (scope, join) -> {via flow: [tokens]}
        self.bodies: dict[int, dict] = {}  # multi-instance activity running -> its state
        # Catches waiting for a message, signal or timer, oldest first: {"token" (the
        # catch's, the activity's for a boundary event, the gateway's for an event-based
        # gateway's catches) or "scope" (an event sub-process's start), "node", "kind"
        # (message, signal, timer), "name", "key", ...}.
        self.waiters: list[dict] = []
        self.visits: dict[str, int] = {}
        self.ready: deque = deque()
        self.end: tuple | None = None
        self.calling: str | None = None  # the control-point call in flight (see `ask`)
        self.last_id = 0
        self.events: list[dict] = []
        # The records cuga-flo cannot derive from the contexts (docs/bridge.md §12.2),
        # not sent yet: each goes with the next context, or with the result.
        self.unsent: list[dict] = []

    # Record and outcome.
    def emit(self, event: str, **fields) -> None:
        self.events.append({"seq": len(self.events) + 1, "at_ms": int(time.time() * 1000),
                            "event": event, **fields})

    def record(self, event: str, at: int | None = None, **fields) -> None:
        """A record of this engine's own for cuga-flo's journal: `at` node entries before it."""
        self.emit(event, **fields)
        self.unsent.append({"at": len(self.path) if at is None else at, "event": event, **fields})

    def take_unsent(self) -> list:
        sent, self.unsent = self.unsent, []
        return sent

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
                "variables": self.vars, "steps": len(self.path), "path": self.path,
                "records": self.take_unsent()}

    def key(self, element: str) -> str:
        """The idempotency key of the next visit of `element` (`<run>:<element>:<visit>`)."""
        self.visits[element] = self.visits.get(element, 0) + 1
        return f"{self.run_id}:{element}:{self.visits[element]}"

    # Tokens.
    def add_token(self, scope: int, at: tuple, **extra) -> int:
        self.last_id += 1
        self.tokens[self.last_id] = {"scope": scope, "at": at, **extra}
        return self.last_id

    def place(self, token: int, kind: str, where: str) -> None:
        self.tokens[token]["at"] = (kind, where)

    def held(self) -> set:
        """The nodes holding a token (at them, waiting at them, or arriving at them)."""
        at = [t["at"] for t in self.tokens.values()]
        return {w for k, w in at if k in ("node", "join", "wait", "mi")} | \
            {self.topo.flows[w]["target"] for k, w in at if k == "via" and w in self.topo.flows}

    def scope_alive(self, scope: int) -> bool:
        return scope == 0 or scope in self.scopes

    def container(self, scope: int):
        """The sub-process a scope is an instance of (None: the process)."""
        return self.scopes[scope][1] if scope else None

    def instances_around(self, token: int) -> list:
        """The multi-instance instances `token` runs in, outermost first."""
        chain, t = [], token
        while t in self.tokens:
            if "mi" in self.tokens[t]:
                chain.append(t)
            scope = self.tokens[t]["scope"]
            if not scope or scope not in self.scopes:
                break
            t = self.scopes[scope][0]
        return list(reversed(chain))

    async def drive(self) -> None:
        self.emit("run_started", run_id=self.run_id, app=self.process_key, process_key=self.process_key,
                  process_id=self.topo.process_id, engine="python", reasoner="", variables=dict(self.vars))
        bad = next((n for n in self.topo.nodes.values() if n.family == "unsupported"), None)
        starts = self.topo.start_nodes(None)
        if bad:
            self.fail(f"`{bad.id}` is a <{bad.tag}>, which this engine cannot run")
        elif not starts:
            self.fail("the process has no start event at process level")
        else:
            self.arm_event_subprocesses(0)
        for node in starts:
            self.ready.append(("enter", self.add_token(0, ("node", node)), node))
        while self.end is None:
            if self.ready:
                step = self.ready.popleft()
                if step[1] in self.tokens:
                    await getattr(self, step[0])(*step[1:])
            elif not self.release_joins() and not self.fire_due_timer():
                if self.tokens:
                    self.fail(self.stuck_message())
                return

    # Context of a control point (§4).
    def ctx(self, element_id: str, name, token: int | None = None, **extra) -> dict:
        variables = dict(self.vars)
        instance = None
        for inst in self.instances_around(token) if token is not None else []:
            variables.update(self.tokens[inst]["locals"])
            body = self.bodies.get(self.tokens[inst]["mi"])
            instance = {"loop_counter": self.tokens[inst]["index"] + 1, "instances": body["count"] if body else 0}
        c = {"run_id": self.run_id, "process_key": self.process_key, "element_id": element_id,
             "element_name": name, "variables": variables, "history": list(self.path),
             "instruction": None}
        if instance:
            c["instance"] = instance
        if self.topo.changed:  # §4.2: the live topology is no longer the registered one
            c["model"] = self.topo.summary()
        return {**c, **extra}

    async def ask(self, tool: str, id_key: str, element: str, ctx: dict) -> dict:
        log(f"call {tool} {element} (run {self.run_id})")
        if CALL_DELAY:
            await anyio.sleep(CALL_DELAY)
        # How the run fails if the connection is lost during the call (which cancels it).
        self.calling = FAILS[tool].format(element, (ctx.get("edge") or {}).get("id"))
        ctx["idempotency_key"] = self.key(element)
        records = self.take_unsent()
        if records:
            ctx["records"] = records
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

    def record_entry(self, token: int, n: Node, instance: dict | None = None) -> bool:
        if len(self.path) >= self.budget:
            self.fail(f"the step budget of {self.budget} node entries is spent: "
                      f"entering `{n.id}` would exceed it")
            return False
        if instance is not None:  # cuga-flo cannot see which instance an entry is
            self.record("node_entered", node=n.id, kind=n.tag, name=n.name, token=token, instance=instance)
        else:
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
        if n.multi and n.family in ACTIVITIES and "mi" not in self.tokens[token]:
            return self.enter_multi(token, n)
        if not self.record_entry(token, n):
            return
        await self.work(token, node)

    async def work(self, token: int, node: str) -> None:
        """What a node does once entered."""
        n = self.topo.nodes.get(node)
        if n is None:
            return self.fail(f"node `{node}` no longer exists")
        if self.tokens[token].pop("caught", None) == n.id:  # the race an event-based gateway ran
            return await self.leave(token, node)
        if n.family in ACTIVITIES:
            self.arm_boundaries(token, n)
        if n.family == "task" and n.detail == "receive":  # it waits for its message
            self.wait(token, n, "message")
        elif n.family in ("task", "call_activity"):
            # The call waits its turn: tokens that need no call move first (natively,
            # calls overlap with the rest of the run).
            self.ready.append(("call", token, node))
        elif n.family == "sub_process" and not n.event_subprocess:
            self.start_scope(token, n)
        elif n.family == "intermediate_throw_event" and "link" in n.defs:
            catch = self.topo.link_catch(n)
            if catch is None:
                return self.fail(f"link throw event `{n.id}` has no link catch event with the same name in its scope")
            self.place(token, "node", catch.id)
            self.ready.append(("enter", token, catch.id))
        elif n.family in ("end_event", "intermediate_throw_event") and {"error", "escalation"} & set(n.defs):
            kind = "error" if "error" in n.defs else "escalation"
            self.throw(token, kind, n.code, n.id, (n.event_ref or {}).get("name"), from_task=False)
        elif n.family in ("end_event", "intermediate_throw_event") and {"message", "signal"} & set(n.defs):
            self.deliver(n, "message" if "message" in n.defs else "signal")
            self.pass_on(token, n)
        elif n.family == "end_event":
            self.terminate_end(token, n) if "terminate" in n.defs else self.end_token(token)
        elif n.family == "intermediate_catch_event" and ({"message", "signal"} & set(n.defs)
                                                          or ("timer" in n.defs and not n.zero_timer)):
            self.wait(token, n)
        elif n.family == "gateway" and n.detail == "event_based" and len(self.topo.outgoing(n.id)) >= 2:
            self.race(token, n)
        elif n.family == "gateway" and n.detail != "parallel" and len(self.topo.outgoing(n.id)) >= 2:
            await self.gateway(token, n)
        else:  # start and intermediate events, event sub-processes, passing gateways
            await self.leave(token, node)

    async def call(self, token: int, node: str) -> None:
        n = self.topo.nodes.get(node)
        if n is None:
            return self.fail(f"node `{node}` no longer exists")
        await self.task(token, n)

    async def skip(self, token: int, node: str, reason) -> None:
        n = self.topo.nodes.get(node)
        if n is None:
            return self.fail(f"node `{node}` no longer exists")
        if self.record_entry(token, n):
            self.emit("task_finished", node=node, status="skipped", outputs={}, variables={},
                      decided_by=reason[0], reason=reason[1], error=None, duration_ms=0)
            await self.leave(token, node)

    async def leave(self, token: int, node: str) -> None:
        self.disarm(token)
        if "mi" in self.tokens.get(token, {}):
            return self.complete_instance(token)
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

    def pass_on(self, token: int, n: Node) -> None:
        """A throw event goes on, an end event ends its token."""
        if token not in self.tokens:
            return
        if n.family == "end_event":
            self.end_token(token)
        else:
            self.disarm(token)
            self.send(token, [f["id"] for f in self.topo.outgoing(n.id)])

    # Sub-processes.
    def start_scope(self, token: int, n: Node) -> None:
        starts = self.topo.start_nodes(n.id)
        if not starts:
            return self.send(token, [f["id"] for f in self.topo.outgoing(n.id)])
        scope = self.new_scope(token, n.id)
        for start in starts:
            self.ready.append(("enter", self.add_token(scope, ("node", start)), start))

    def new_scope(self, token: int, subprocess: str) -> int:
        self.last_id += 1
        scope = self.last_id
        self.scopes[scope] = (token, subprocess)
        self.arm_event_subprocesses(scope)
        return scope

    def complete_scope(self, scope: int) -> None:
        self.joins = {k: v for k, v in self.joins.items() if k[0] != scope}
        token, subprocess = self.scopes.pop(scope)
        self.ready.append(("leave", token, subprocess))

    def terminate_end(self, token: int, n: Node) -> None:
        scope = self.tokens[token]["scope"]
        if scope == 0:
            return self.terminate(f"terminate end event {n.id}")
        for t in [t for t, v in self.tokens.items() if v["scope"] == scope]:
            self.cancel_token(t)
        self.complete_scope(scope)

    def cancel_token(self, token: int) -> None:
        """End `token` and everything it holds: the instances of its multi-instance
        activity, the sub-process instance it waits at (everything in it), its waits."""
        if self.tokens.pop(token, None) is None:
            return
        body = self.bodies.pop(token, None)
        for inst in list(body["active"]) if body else []:
            self.cancel_token(inst)
        for scope in [s for s, (t, _) in self.scopes.items() if t == token]:
            self.cancel_scope(scope)
        self.waiters = [w for w in self.waiters if w.get("token") != token]

    def cancel_scope(self, scope: int) -> None:
        for t in [t for t, v in self.tokens.items() if v["scope"] == scope]:
            self.cancel_token(t)
        self.joins = {k: v for k, v in self.joins.items() if k[0] != scope}
        self.scopes.pop(scope, None)
        self.waiters = [w for w in self.waiters if w.get("scope") != scope]

    # BPMN errors and escalations (as src/engine/native/throws.rs).
    def activity_holder(self, token: int) -> int:
        """The token holding the activity `token` works at: a multi-instance instance's body."""
        return self.tokens.get(token, {}).get("mi", token)

    def enclosing(self, holder: int):
        scope = self.tokens[holder]["scope"] if holder in self.tokens else 0
        if not scope or scope not in self.scopes:
            return None
        t, subprocess = self.scopes[scope]
        return self.activity_holder(t), subprocess

    def throw(self, token: int, kind: str, code, node: str, message, from_task: bool) -> None:
        """Deliver what `token` threw at `node` to what catches it, outwards from the thrower:
        the task's boundary events, the event sub-processes of the scope, the boundary
        events of the sub-process the scope is an instance of, and so on."""
        at = (self.activity_holder(token), node) if from_task else None
        holder, caught, esp = token, None, None
        while True:
            if at is not None:
                boundary = self.topo.catching_boundary(at[1], kind, code)
                if boundary is not None:
                    caught = (at[0], at[1], boundary)
                    break
                holder = at[0]
            scope = self.tokens[holder]["scope"] if holder in self.tokens else 0
            found = self.topo.catching_event_subprocess(self.container(scope), kind, code)
            if found is not None:
                esp = (scope, *found)
                break
            at = self.enclosing(holder)
            if at is None:
                break
        name = self.topo.nodes[node].name if node in self.topo.nodes else None
        thrown = dict(kind=kind, code=code, node=node, name=name, message=message)
        if esp is not None:
            scope, subprocess, start = esp
            interrupting = kind == "error" or start.interrupting
            self.record("event_thrown", caught_by=start.id, activity=subprocess.id,
                        interrupting=interrupting, **thrown)
            self.start_event_subprocess(scope, subprocess, start, interrupting)
            if not interrupting:
                self.pass_on(token, self.topo.nodes[node])
            return
        interrupting = caught is not None and (kind == "error" or caught[2].interrupting)
        self.record("event_thrown", caught_by=caught[2].id if caught else None,
                    activity=caught[1] if caught else None, interrupting=interrupting, **thrown)
        if caught is None:
            label = code or "(no code)"
            if kind == "escalation":
                return self.pass_on(token, self.topo.nodes[node])
            if from_task:
                return self.fail(f"task `{node}` failed: {message or 'no reason given'} (BPMN error {label}, not caught)")
            return self.fail(f"error end event `{node}` raised BPMN error {label}, which nothing catches")
        holder, activity, boundary = caught
        scope = self.tokens[holder]["scope"]
        if interrupting:
            self.cancel_token(holder)
        self.ready.append(("enter", self.add_token(scope, ("node", boundary.id)), boundary.id))
        if not interrupting:
            self.pass_on(token, self.topo.nodes[node])

    # Event sub-processes (as src/engine/native/event_subprocess.rs).
    def arm_event_subprocesses(self, scope: int) -> None:
        """A scope started: its message, signal and timer event sub-processes wait."""
        for subprocess, start in self.topo.event_subprocesses(self.container(scope)):
            for kind in ("message", "signal", "timer"):
                if kind in start.defs and (kind != "timer" or start.zero_timer):
                    self.waiters.append({"scope": scope, "node": start.id, "kind": kind,
                                         "name": start.catch_name, "subprocess": subprocess,
                                         "key": self.key(start.id)})

    def start_event_subprocess(self, scope: int, subprocess: Node, start: Node, interrupting: bool) -> None:
        if interrupting:  # the scope's other work ends (its waits too)
            for t in [t for t, v in self.tokens.items() if v["scope"] == scope]:
                self.cancel_token(t)
            self.waiters = [w for w in self.waiters if w.get("scope") != scope]
        token = self.add_token(scope, ("node", subprocess.id))
        if not self.record_entry(token, subprocess):
            return
        inner = self.new_scope(token, subprocess.id)
        self.ready.append(("enter", self.add_token(inner, ("node", start.id)), start.id))

    # Messages, signals and timers within the run (as src/engine/native/messages.rs).
    def wait(self, token: int, n: Node, kind: str | None = None) -> None:
        kind = kind or next(k for k in ("message", "signal", "timer") if k in n.defs)
        self.place(token, "wait", n.id)
        self.waiters.append({"token": token, "node": n.id, "kind": kind, "name": n.catch_name,
                             "key": self.key(n.id), "zero": n.zero_timer})

    def arm_boundaries(self, token: int, n: Node) -> None:
        """The message, signal and timer boundary events of an activity wait while it runs."""
        holder = self.activity_holder(token)
        if holder != token:  # an instance: the body armed them
            return
        for b in self.topo.boundary_events(n.id):
            kind = next((k for k in ("message", "signal", "timer") if k in b.defs), None)
            if kind and (kind != "timer" or b.zero_timer):
                self.waiters.append({"token": token, "node": b.id, "kind": kind, "name": b.catch_name,
                                     "key": self.key(b.id), "activity": n.id, "zero": b.zero_timer})

    def disarm(self, token: int) -> None:
        """`token` leaves its activity or catch: what it waited for no longer concerns it."""
        self.waiters = [w for w in self.waiters if w.get("token") != token]

    def race(self, token: int, n: Node) -> None:
        """An event-based gateway: every catch after it waits; the first triggered wins."""
        self.place(token, "wait", n.id)
        for f in self.topo.outgoing(n.id):
            c = self.topo.nodes.get(f["target"])
            kind = next((k for k in ("message", "signal", "timer") if c and k in c.defs), None)
            if c is not None and c.family == "task" and c.detail == "receive":
                kind = "message"
            if kind is None:
                return self.fail(f"event-based gateway `{n.id}`: `{f['target']}` is not a message, "
                                 "signal or timer catch event or a receive task")
            self.waiters.append({"token": token, "node": c.id, "kind": kind, "name": c.catch_name,
                                 "key": self.key(c.id), "gateway": n.id, "flow": f["id"], "zero": c.zero_timer})

    def alive(self, w: dict) -> bool:
        return w["token"] in self.tokens if "token" in w else self.scope_alive(w["scope"])

    def deliver(self, thrower: Node, kind: str) -> None:
        """A message reaches the catch that started waiting first, a signal every catch
        waiting for it; nothing waiting for it, it passes."""
        name = thrower.catch_name
        matching = [w for w in self.waiters if w["kind"] == kind and w["name"] == name and self.alive(w)]
        for w in matching[:1] if kind == "message" else matching:
            if w in self.waiters and self.alive(w):
                self.record("message_received", key=w["key"], node=w["node"], kind=kind, name=name,
                            thrown_by=thrower.id)
                self.trigger(w)

    def trigger(self, w: dict) -> None:
        """What a wait does once its message, signal or timer came."""
        self.waiters.remove(w)
        if "subprocess" in w:  # an event sub-process's start
            start = self.topo.nodes[w["node"]]
            if not start.interrupting and w["kind"] != "timer":
                self.waiters.append({**w, "key": self.key(start.id)})  # it goes on listening
            return self.start_event_subprocess(w["scope"], w["subprocess"], start, start.interrupting)
        token = w["token"]
        if "gateway" in w:  # the race is won: the other catches are cancelled
            self.disarm(token)
            self.tokens[token]["caught"] = w["node"]
            self.place(token, "flow", w["flow"])
            return self.ready.append(("traverse", token, w["flow"], False))
        if "activity" in w:  # a boundary event
            b = self.topo.nodes[w["node"]]
            scope = self.tokens[token]["scope"]
            if b.interrupting:
                self.cancel_token(token)
            elif w["kind"] != "timer":
                self.waiters.append({**w, "key": self.key(b.id)})
            return self.ready.append(("enter", self.add_token(scope, ("node", b.id)), b.id))
        self.place(token, "node", w["node"])  # a catch event: it goes on
        self.ready.append(("leave", token, w["node"]))

    def fire_due_timer(self) -> bool:
        """Nothing else can move: the first zero-duration timer armed fires."""
        due = next((w for w in self.waiters if w["kind"] == "timer" and w.get("zero", True) and self.alive(w)), None)
        if due is None:
            return False
        self.trigger(due)
        return True

    # Multi-instance activities (as src/engine/native/multi.rs).
    def enter_multi(self, token: int, n: Node) -> None:
        spec, sequential = n.multi
        try:
            items, count = None, 0
            if spec.get("collection"):
                items = evaluate(spec["collection"], self.ctx_vars(token))
                if not isinstance(items, list):
                    raise Unevaluable(f"the collection `{spec['collection']}` is not a list")
                count = len(items)
            elif spec.get("cardinality"):
                count = evaluate(spec["cardinality"], self.ctx_vars(token))
                if isinstance(count, float) and count.is_integer():
                    count = int(count)
                if not isinstance(count, int) or isinstance(count, bool) or count < 0:
                    raise Unevaluable(f"the cardinality `{spec['cardinality']}` is not a count")
            else:
                raise Unevaluable("it has neither a collection nor a cardinality")
        except Unevaluable as e:
            return self.fail(f"multi-instance activity `{n.id}`: {e}")
        self.place(token, "mi", n.id)
        body = {"node": n.id, "spec": spec, "sequential": sequential, "items": items, "count": count,
                "started": 0, "completed": 0, "active": set(), "outputs": [None] * count}
        self.bodies[token] = body
        if count == 0:  # entered once, no instance
            if not self.record_entry(token, n, {"loop_counter": 0, "instances": 0}):
                return
            return self.finish_multi(token)
        self.arm_boundaries(token, n)
        started = []
        for _ in range(1 if sequential else count):
            inst = self.start_instance(token)
            if inst is None:
                return
            started.append(inst)
        for inst in started:
            self.ready.append(("work", inst, n.id))

    def ctx_vars(self, token: int) -> dict:
        return self.ctx("", None, token)["variables"]

    def start_instance(self, body_token: int):
        body = self.bodies[body_token]
        index = body["started"]
        body["started"] += 1
        spec = body["spec"]
        local = {"loopCounter": index + 1, "nrOfInstances": body["count"]}
        if body["items"] is not None and spec.get("element_variable"):
            local[spec["element_variable"]] = body["items"][index]
        inst = self.add_token(self.tokens[body_token]["scope"], ("node", body["node"]),
                              mi=body_token, index=index, locals=local, written={})
        body["active"].add(inst)
        n = self.topo.nodes[body["node"]]
        if not self.record_entry(inst, n, {"loop_counter": index + 1, "instances": body["count"]}):
            return None
        return inst

    def write(self, token: int, variables: dict) -> None:
        """A task's variables: those naming its innermost instance's own variables (or the
        output element) stay the instance's, the others are the process's."""
        chain = self.instances_around(token)
        if not chain:
            return self.vars.update(variables)
        inst = self.tokens[chain[-1]]
        body = self.bodies.get(inst["mi"]) or {}
        element = simple_name((body.get("spec") or {}).get("output_element"))
        for k, v in variables.items():
            if k in inst["locals"] or k == element:
                inst["locals"][k] = v
            else:
                self.vars[k] = v
            inst["written"][k] = v

    def complete_instance(self, inst: int) -> None:
        t = self.tokens.pop(inst)
        body_token = t["mi"]
        body = self.bodies.get(body_token)
        if body is None:
            return
        body["active"].discard(inst)
        body["completed"] += 1
        spec, local = body["spec"], {**self.vars, **t["locals"]}
        try:
            if spec.get("output_element"):
                body["outputs"][t["index"]] = evaluate(spec["output_element"], local)
            else:
                body["outputs"][t["index"]] = dict(t["written"])
            done = body["completed"] == body["count"]
            if not done and spec.get("completion_condition"):
                counts = {"nrOfInstances": body["count"], "nrOfCompletedInstances": body["completed"],
                          "nrOfActiveInstances": len(body["active"])}
                counts.update(numberOfInstances=counts["nrOfInstances"],
                              numberOfCompletedInstances=counts["nrOfCompletedInstances"],
                              numberOfActiveInstances=counts["nrOfActiveInstances"])
                done = evaluate(spec["completion_condition"], {**local, **counts}) is True
        except Unevaluable as e:
            return self.fail(f"multi-instance activity `{body['node']}`: {e}")
        if done:
            for other in list(body["active"]):
                self.cancel_token(other)
            return self.finish_multi(body_token)
        if body["sequential"] and body["started"] < body["count"]:
            nxt = self.start_instance(body_token)
            if nxt is not None:
                self.ready.append(("work", nxt, body["node"]))

    def finish_multi(self, body_token: int) -> None:
        body = self.bodies.pop(body_token)
        target = body["spec"].get("output_collection")
        if target:
            self.record("variables_set", source=f"multi-instance {body['node']}", values={target: body["outputs"]})
            self.vars[target] = body["outputs"]
        self.place(body_token, "node", body["node"])
        self.disarm(body_token)
        self.send(body_token, [f["id"] for f in self.topo.outgoing(body["node"])])

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
        reachable = self.topo.reachable_flows([w for k, w in others if k in ("node", "join", "wait", "mi")], on_flows)
        return [f for f in missing if f in reachable]

    def release_joins(self) -> bool:
        return any([self.try_fire(scope, join) for scope, join in list(self.joins)])

    def stuck_message(self) -> str:
        waits = [w for w in self.waiters if self.alive(w) and "subprocess" not in w]
        if waits:
            what = ", ".join(f"the timer at `{w['node']}` (not due at once)" if w["kind"] == "timer"
                             else f"{w['kind']} `{w['name']}` at `{w['node']}`" for w in waits)
            return (f"the run can only wait for {what}, which cannot come from within the run; "
                    "this engine cannot park a run (docs/bridge.md §13)")
        joins = [f"`{j}` (waiting for {', '.join(self.awaited(s, j, st))})" for (s, j), st in self.joins.items()]
        if joins:
            return f"the run is stuck: join {', '.join(joins)} can never fire"
        return f"the run is stuck: tokens remain ({list(self.tokens.values())}) but none can move"

    # Control points.
    async def task(self, token: int, n: Node) -> None:
        ctx = self.ctx(n.id, n.name, token)
        if n.id in self.inserted:
            ctx["instruction"] = self.inserted[n.id].get("instruction")
        started = time.perf_counter()
        try:
            out = await self.ask("execute_task", "task_id", n.id, ctx)
        except CallFailed as e:
            if not e.refused:
                return self.fail(f"task `{n.id}` failed: {e.message}")
            # A ControlPointError: the task failed unanswered (a BPMN error, as natively).
            out = {"status": "failed", "error": e.message, "error_code": "UNANSWERED"}
        code = (out.get("error_code") or "TASK_FAILED") if out.get("status") == "failed" else None
        self.emit("task_finished", node=n.id, **{k: out.get(k) for k in (
            "status", "outputs", "variables", "decided_by", "reason", "error", "digest")},
            error_code=code, duration_ms=int((time.perf_counter() - started) * 1000))
        if token not in self.tokens:  # cancelled while it ran
            return
        if code is not None:
            return self.throw(token, "error", code, n.id, out.get("error") or "no reason given", from_task=True)
        self.write(token, out.get("variables") or {})
        await self.leave(token, n.id)

    async def gateway(self, token: int, n: Node) -> None:
        offered = self.topo.outgoing(n.id)
        options = [{"id": f["id"], "target": f["target"], "name": f["name"], "condition": f["condition"],
                    "decision": None, "is_default": f["id"] == n.default_flow} for f in offered]
        started = time.perf_counter()
        try:
            d = await self.ask("route_gateway", "gateway_id", n.id, self.ctx(n.id, n.name, token, flows=options))
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
        ctx = self.ctx(hook, None, token, edge=self.topo.edge(f), executed=list(self.executed))
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
    # The records cuga-flo cannot derive from the contexts, not sent with one (§12.2).
    records: list[dict[str, Any]] = []


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
