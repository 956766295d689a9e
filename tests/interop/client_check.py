#!/usr/bin/env python3
"""Drive `cuga-flo serve --http` with the official MCP Python SDK and check every tool.

    client_check.py URL [--scenario FILE.json] [--token-env VAR] [--apps-dir DIR]

URL is the server's endpoint (`http://127.0.0.1:PORT/mcp`). The server must serve the
demo app `incident_response` (process key `incident_response_v1`) and, for the
`run_process` check, have been started with the scenario's answers (`--answers`).

--scenario FILE.json  {"name", "inputs", "expect": {"status", "path", "variables"}}: a
                      scenario of incident_response as JSON (tests/suite/interop.rs writes it
                      from the scenario's YAML). Without it, run_process is not called.
--token-env VAR       send `Authorization: Bearer $VAR`, and check that the server
                      refuses a request without it or with a wrong one.

Besides the tool calls through `ClientSession` (the initialize handshake), it checks the
raw HTTP answer (status, content type, session header), a second session, and the SDK's
high-level `Client`, which probes `server/discover` first (the 2026-07-28 protocol).

Prints a JSON summary on stdout (every check, with its detail or its error, and warnings:
what the SDK logged about the server, and a run's variables that differ from the
scenario's); exits 1 when a check failed, 0 otherwise.
"""

import argparse
import json
import logging
import os
import sys
import traceback
import uuid
from importlib import metadata
from pathlib import Path
from typing import Any, Awaitable, Callable

import anyio
import httpx2
from mcp import ClientSession
from mcp.client import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

PROCESS_KEY = "incident_response_v1"
PROCESS_ID = "Process_IncidentResponse"
EXPECTED_TOOLS = {
    "execute_task",
    "route_gateway",
    "evaluate_hook",
    "register_flow",
    "get_bpmn_process",
    "get_flow_annotations",
    "run_process",
    "deliver_message",
    "send_signal",
}
CALL_TIMEOUT = 60.0  # seconds, one tool call
RUN_TIMEOUT = 120.0  # seconds, run_process


class Failed(Exception):
    """A check's expectation did not hold."""


def expect(cond: bool, message: str) -> None:
    if not cond:
        raise Failed(message)


def short(value: Any, limit: int = 600) -> str:
    text = json.dumps(value, default=str) if not isinstance(value, str) else value
    return text if len(text) <= limit else text[:limit] + "…"


def describe(exc: BaseException) -> str:
    """One line per leaf exception (anyio wraps transport failures in groups)."""
    if isinstance(exc, BaseExceptionGroup):
        return "; ".join(describe(e) for e in exc.exceptions)
    if isinstance(exc, MCPError):
        return f"MCPError {exc.code}: {exc.message}"
    return f"{type(exc).__name__}: {exc}"


def texts(result) -> list:
    return [c.text for c in result.content if getattr(c, "type", None) == "text"]


class Report:
    def __init__(self) -> None:
        self.checks: list = []
        self.facts: dict = {}
        # Worth knowing, not failures: what the SDK logged as a warning, and surprises.
        self.warnings: list = []

    def warn(self, message: str) -> None:
        self.warnings.append(message)

    async def check(self, name: str, fn: Callable[[], Awaitable[Any]]) -> Any:
        """Run one check; a failure is recorded, never raised (cancellation still is)."""
        try:
            detail = await fn()
        except Failed as e:
            self.checks.append({"name": name, "ok": False, "error": str(e)})
            return None
        except Exception as e:  # the SDK's own rejections are findings too
            self.checks.append(
                {
                    "name": name,
                    "ok": False,
                    "error": describe(e),
                    "traceback": traceback.format_exc(limit=6),
                }
            )
            return None
        entry = {"name": name, "ok": True}
        if detail is not None:
            entry["detail"] = detail
        self.checks.append(entry)
        return detail

    def fail(self, name: str, error: str) -> None:
        self.checks.append({"name": name, "ok": False, "error": error})

    @property
    def ok(self) -> bool:
        return bool(self.checks) and all(c["ok"] for c in self.checks)


async def call(session: ClientSession, tool: str, args: Any, timeout: float = CALL_TIMEOUT):
    return await session.call_tool(tool, args, read_timeout_seconds=timeout)


def structured(result, tool: str) -> dict:
    """The structured content of a successful call, checked against its text content."""
    expect(
        not result.is_error,
        f"`{tool}` answered isError=true: {short(texts(result))}",
    )
    data = result.structured_content
    expect(isinstance(data, dict), f"`{tool}` returned no structured content object: {short(data)}")
    # Clients that ignore structuredContent read the text block: it must be the same JSON.
    blocks = texts(result)
    expect(blocks, f"`{tool}` returned structured content without a text block")
    try:
        as_text = json.loads(blocks[0])
    except ValueError as e:
        raise Failed(f"`{tool}`'s text block is not JSON ({e}): {short(blocks[0])}")
    expect(as_text == data, f"`{tool}`'s text block differs from its structured content")
    return data


def tool_error(result, tool: str) -> str:
    """The text of a tool error (isError=true)."""
    expect(
        result.is_error,
        f"`{tool}` should have failed but answered: {short(result.structured_content)}",
    )
    blocks = texts(result)
    expect(blocks, f"`{tool}`'s error has no text content")
    return "\n".join(blocks)


class Model:
    """The incident_response process as get_bpmn_process gave it: contexts are built from it."""

    def __init__(self, process: dict) -> None:
        self.process = process
        self.nodes = {n["id"]: n for n in process.get("nodes", [])}
        self.flows = {f["id"]: f for f in process.get("flows", [])}

    def name(self, node_id: str):
        return self.nodes.get(node_id, {}).get("name")

    @staticmethod
    def condition(flow: dict):
        cond = flow.get("condition")
        body = (cond or {}).get("body", "").strip() if isinstance(cond, dict) else None
        return body or None

    def edge(self, flow_id: str) -> dict:
        f = self.flows[flow_id]
        return {
            "id": f["id"],
            "source": f["source"],
            "target": f["target"],
            "name": f.get("name"),
            "condition": self.condition(f),
        }

    def options(self, gateway_id: str) -> list:
        default = self.nodes.get(gateway_id, {}).get("default_flow")
        return [
            {
                "id": f["id"],
                "target": f["target"],
                "name": f.get("name"),
                "condition": self.condition(f),
                "decision": None,
                "is_default": f["id"] == default,
            }
            for f in self.flows.values()
            if f["source"] == gateway_id
        ]


class SdkWarnings(logging.Handler):
    """Collects what the SDK logs at WARNING or above (its complaints about the server)."""

    def __init__(self, report: Report) -> None:
        super().__init__(logging.WARNING)
        self.report = report

    def emit(self, record: logging.LogRecord) -> None:
        self.report.warn(f"the SDK logged ({record.name}): {record.getMessage()}")


def context(run_id: str, element_id: str, variables: dict, **extra) -> dict:
    """A ControlPointContext; `model` left out (the server restores the registered one)."""
    ctx = {
        "run_id": run_id,
        "process_key": PROCESS_KEY,
        "element_id": element_id,
        "element_name": None,
        "variables": variables,
        "history": [],
        "instruction": None,
    }
    ctx.update(extra)
    return ctx


def http_client(token) -> httpx2.AsyncClient:
    headers = {"Authorization": f"Bearer {token}"} if token else None
    return httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30.0, read=RUN_TIMEOUT))


INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "cuga-flo-interop-raw", "version": "0"},
    },
}
RAW_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


async def raw_checks(report: Report, url: str, token) -> None:
    """What the SDK hides: the HTTP status, content type and session header, and the token."""

    async def initialize_raw():
        headers = dict(RAW_HEADERS)
        if token:
            headers["Authorization"] = f"Bearer {token}"
        async with httpx2.AsyncClient(timeout=30.0) as client:
            r = await client.post(url, json=INITIALIZE, headers=headers)
            expect(r.status_code == 200, f"a raw initialize got HTTP {r.status_code}: {r.text[:300]}")
            ctype = r.headers.get("content-type", "")
            expect(
                ctype.startswith("application/json") or ctype.startswith("text/event-stream"),
                f"initialize answered with content type `{ctype}`",
            )
            session = r.headers.get("mcp-session-id")
            detail = {"content_type": ctype, "session_id_header": session is not None}
            if session:
                # End the raw session again, as a well-behaved client does.
                d = await client.delete(url, headers={**headers, "Mcp-Session-Id": session})
                detail["delete_status"] = d.status_code
                # The SDK expects 200/204 (or 405) and logs `Session termination failed`
                # otherwise.
                expect(
                    d.status_code in (200, 204, 405),
                    f"DELETE of the session got HTTP {d.status_code}: {d.text[:300]}",
                )
            return detail

    await report.check("http: raw initialize (status, content type, session header)", initialize_raw)

    if token:

        async def refused(headers: dict, what: str):
            async with httpx2.AsyncClient(timeout=30.0) as client:
                r = await client.post(url, json=INITIALIZE, headers={**RAW_HEADERS, **headers})
            expect(
                r.status_code in (401, 403),
                f"a request {what} got HTTP {r.status_code}, not 401/403: {r.text[:300]}",
            )
            return {"status": r.status_code, "www_authenticate": r.headers.get("www-authenticate")}

        await report.check(
            "auth: a request without the token is refused", lambda: refused({}, "without a token")
        )
        await report.check(
            "auth: a request with a wrong token is refused",
            lambda: refused({"Authorization": "Bearer not-the-token"}, "with a wrong token"),
        )


async def session_checks(report: Report, session: ClientSession, args) -> None:
    run_id = f"interop-{uuid.uuid4().hex[:12]}"
    report.facts["run_id"] = run_id
    apps_dir = Path(args.apps_dir).resolve()
    state: dict = {}

    async def initialize():
        result = await session.initialize()
        report.facts["protocol_version"] = result.protocol_version
        report.facts["server_info"] = result.server_info.model_dump(exclude_none=True)
        expect(result.capabilities.tools is not None, "the server does not advertise tools")
        return {"protocol_version": result.protocol_version, "server": result.server_info.name}

    await report.check("initialize", initialize)
    if not report.ok:
        return  # nothing else can work

    async def list_tools():
        result = await session.list_tools()
        names = {t.name for t in result.tools}
        expect(
            names == EXPECTED_TOOLS,
            f"tools: missing {sorted(EXPECTED_TOOLS - names)}, unexpected {sorted(names - EXPECTED_TOOLS)}",
        )
        out = {}
        for t in result.tools:
            expect(
                isinstance(t.input_schema, dict) and t.input_schema.get("type") == "object",
                f"`{t.name}`'s inputSchema is not of type object: {short(t.input_schema)}",
            )
            expect(bool(t.description), f"`{t.name}` has no description")
            if t.output_schema is not None:
                expect(
                    t.output_schema.get("type") == "object",
                    f"`{t.name}`'s outputSchema is not of type object: {short(t.output_schema)}",
                )
            out[t.name] = {
                "required": t.input_schema.get("required", []),
                "output_schema": t.output_schema is not None,
            }
        return out

    await report.check("tools/list: the seven tools, each with an object inputSchema", list_tools)

    async def ping():
        await session.send_ping()

    await report.check("ping", ping)

    async def annotations():
        data = structured(await call(session, "get_flow_annotations", {"process_key": PROCESS_KEY}), "get_flow_annotations")
        expect(data.get("process_key") == PROCESS_KEY, f"process_key: {data.get('process_key')}")
        hooks = data.get("hooks", {})
        for flow, hook in {
            "Flow_TriageToTicket": "hook_duplicate_alert",
            "Flow_TicketToSeverity": "hook_false_positive",
            "Flow_InvestigateToContain": "hook_notify_before_containment",
        }.items():
            expect(hooks.get(flow) == hook, f"hooks[{flow}] = {hooks.get(flow)!r}, not {hook}")
        expect("Activity_Triage" in data.get("agentic_tasks", []), f"agentic_tasks: {data.get('agentic_tasks')}")
        expect(
            isinstance(data.get("step_budget"), int) and data["step_budget"] > 0,
            f"step_budget: {data.get('step_budget')!r}",
        )
        return {"hooks": len(hooks), "agentic_tasks": len(data["agentic_tasks"]), "step_budget": data["step_budget"]}

    await report.check("get_flow_annotations", annotations)

    async def bpmn():
        data = structured(await call(session, "get_bpmn_process", {"process_key": PROCESS_KEY}), "get_bpmn_process")
        expect(data.get("process_key") == PROCESS_KEY, f"process_key: {data.get('process_key')}")
        process = data.get("process")
        expect(isinstance(process, dict), f"process is not an object: {short(process)}")
        expect(process.get("id") == PROCESS_ID, f"process id: {process.get('id')}")
        model = Model(process)
        for node in ("StartEvent_AlertRaised", "Gateway_Severity", "Activity_Contain", "Event_IncidentClosed"):
            expect(node in model.nodes, f"node {node} missing from the process")
        expect(
            model.nodes["Gateway_Severity"].get("default_flow") == "Flow_SeverityHigh",
            f"Gateway_Severity's default flow: {model.nodes['Gateway_Severity'].get('default_flow')}",
        )
        expect(len(model.options("Gateway_Severity")) == 2, "Gateway_Severity should have two outgoing flows")
        state["model"] = model
        return {"nodes": len(model.nodes), "flows": len(model.flows)}

    await report.check("get_bpmn_process", bpmn)
    model = state.get("model")

    def needs_model():
        if model is None:
            raise Failed("needs get_bpmn_process, which failed")
        return model

    async def route(severity: str, flow: str, decided_by: str, extra: dict):
        m = needs_model()
        ctx = context(
            run_id,
            "Gateway_Severity",
            {"severity": severity, "category": "malware"},
            element_name=m.name("Gateway_Severity"),
            history=["StartEvent_AlertRaised", "Activity_Triage", "Activity_OpenTicket", "Gateway_Severity"],
            flows=m.options("Gateway_Severity"),
            **extra,
        )
        data = structured(
            await call(session, "route_gateway", {"gateway_id": "Gateway_Severity", "ctx": ctx}),
            "route_gateway",
        )
        expect(data.get("flows") == [flow], f"severity {severity}: flows {data.get('flows')}, not [{flow}]")
        expect(
            data.get("decided_by") == decided_by,
            f"severity {severity}: decided_by {data.get('decided_by')!r}, not {decided_by!r}",
        )
        return {"flows": data["flows"], "decided_by": data["decided_by"], "reason": data.get("reason")}

    await report.check(
        "route_gateway: severity low takes the conditioned flow",
        lambda: route("low", "Flow_SeverityLow", "condition", {}),
    )
    await report.check(
        "route_gateway: severity high takes the default flow (ctx.model: null)",
        lambda: route("high", "Flow_SeverityHigh", "default", {"model": None}),
    )

    async def hook(hook_id: str, flow_id: str, variables: dict, want: dict):
        m = needs_model()
        ctx = context(
            run_id,
            hook_id,
            variables,
            edge=m.edge(flow_id),
            executed=["StartEvent_AlertRaised", "Activity_Triage", "Activity_OpenTicket"],
        )
        data = structured(
            await call(session, "evaluate_hook", {"hook_id": hook_id, "ctx": ctx}),
            "evaluate_hook",
        )
        for key, value in want.items():
            expect(data.get(key) == value, f"{hook_id}: {key} = {data.get(key)!r}, not {value!r}")
        expect(data.get("fail_run") is False, f"{hook_id}: fail_run = {data.get('fail_run')!r}")
        return {k: data.get(k) for k in ("action", "decided_by", "reason")}

    await report.check(
        "evaluate_hook: a guard that does not hold continues",
        lambda: hook(
            "hook_false_positive",
            "Flow_TicketToSeverity",
            {"false_positive": False, "severity": "high"},
            {"action": "continue", "decided_by": "condition"},
        ),
    )
    await report.check(
        "evaluate_hook: a policy rule swaps two tasks",
        lambda: hook(
            "hook_notify_before_containment",
            "Flow_InvestigateToContain",
            {"severity": "high", "category": "malware", "containment_impact": "customer_facing"},
            {
                "action": "swap_nodes",
                "decided_by": "rule",
                "swap": ["Activity_Contain", "Activity_NotifyStakeholders"],
                "state_updates": {"notify_first": True},
            },
        ),
    )

    async def scripted_task():
        ctx = context(
            run_id,
            "Activity_OpenTicket",
            {"alert_id": "A-7790", "severity": "high"},
            element_name="Open incident ticket",
        )
        data = structured(
            await call(session, "execute_task", {"task_id": "Activity_OpenTicket", "ctx": ctx}),
            "execute_task",
        )
        expect(data.get("status") == "completed", f"status {data.get('status')!r}: {data.get('error')}")
        expect(data.get("decided_by") == "scripted", f"decided_by {data.get('decided_by')!r}")
        expect(
            data.get("variables") == {"ticket_id": "INC-A-7790"},
            f"variables {short(data.get('variables'))}",
        )
        return {"variables": data["variables"], "decided_by": data["decided_by"]}

    if args.scenario:
        await report.check("execute_task: an agentic task answered from --answers", scripted_task)

    # register_flow: a second app, by folder, then its pass-through task.
    async def register(path: Path, key: str):
        data = structured(
            await call(session, "register_flow", {"flow_config_path": str(path)}),
            "register_flow",
        )
        expect(data.get("process_key") == key, f"registered {data.get('process_key')!r}, not {key!r}")
        return data

    await report.check(
        "register_flow: an app folder (trip_planner)",
        lambda: register(apps_dir / "trip_planner", "trip_planner_v1"),
    )

    async def pass_through():
        ctx = {
            "run_id": run_id,
            "process_key": "trip_planner_v1",
            "element_id": "Activity_0w2einw",
            "element_name": None,
            "variables": {"destination": "Lisbon"},
            "history": ["StartEvent_1", "Activity_0w2einw"],
            "instruction": None,
        }
        data = structured(
            await call(session, "execute_task", {"task_id": "Activity_0w2einw", "ctx": ctx}),
            "execute_task",
        )
        expect(data.get("status") == "completed", f"status {data.get('status')!r}: {data.get('error')}")
        expect(data.get("decided_by") == "none", f"decided_by {data.get('decided_by')!r}")
        expect(data.get("outputs") == {} and data.get("variables") == {}, f"answer {short(data)}")
        return {"status": data["status"], "decided_by": data["decided_by"]}

    await report.check("execute_task: a pass-through task (trip_planner, mode native)", pass_through)

    async def registered_annotations():
        data = structured(
            await call(session, "get_flow_annotations", {"process_key": "trip_planner_v1"}),
            "get_flow_annotations",
        )
        expect(data.get("process_key") == "trip_planner_v1", f"process_key: {data.get('process_key')}")
        return {"agentic_tasks": data.get("agentic_tasks")}

    await report.check("get_flow_annotations: the flow just registered", registered_annotations)

    if args.scenario:
        scenario = json.loads(Path(args.scenario).read_text())

        async def run_process():
            want = scenario.get("expect") or {}
            data = structured(
                await call(
                    session,
                    "run_process",
                    {"process_key": PROCESS_KEY, "run_id": run_id, "variables": scenario.get("inputs", {})},
                    RUN_TIMEOUT,
                ),
                "run_process",
            )
            expect(data.get("run_id") == run_id, f"run_id {data.get('run_id')!r}, not {run_id!r}")
            if "status" in want:
                expect(
                    data.get("status") == want["status"],
                    f"status {data.get('status')!r}, not {want['status']!r} (message: {data.get('message')})",
                )
            if "path" in want:
                expect(data.get("path") == want["path"], f"path {data.get('path')}, not {want['path']}")
            # The scenario's final variables: the client passes only the scenario's inputs;
            # the bridge fills in the config's defaults as `start` does.
            variables = data.get("variables", {})
            wrong = {
                key: {"expected": value, "got": variables.get(key, "<absent>")}
                for key, value in (want.get("variables") or {}).items()
                if variables.get(key, object()) != value
            }
            expect(not wrong, f"run_process: final variables differ from the scenario's expect: {json.dumps(wrong)}")
            return {"status": data["status"], "steps": data.get("steps"), "path_length": len(data.get("path", []))}

        await report.check(f"run_process: scenario `{scenario.get('name')}` as it expects", run_process)

    # Errors.
    async def unknown_key(tool: str, args_: dict):
        text = tool_error(await call(session, tool, args_), tool)
        expect("no_such_process" in text, f"`{tool}`'s error does not name the key: {short(text)}")
        return {"message": short(text, 200)}

    await report.check(
        "error: get_flow_annotations of an unknown process key",
        lambda: unknown_key("get_flow_annotations", {"process_key": "no_such_process"}),
    )
    await report.check(
        "error: get_bpmn_process of an unknown process key",
        lambda: unknown_key("get_bpmn_process", {"process_key": "no_such_process"}),
    )
    await report.check(
        "error: run_process of an unknown process key",
        lambda: unknown_key(
            "run_process", {"process_key": "no_such_process", "run_id": f"{run_id}-x", "variables": {}}
        ),
    )

    async def unknown_key_in_ctx():
        ctx = context(run_id, "Gateway_Severity", {"severity": "low"})
        ctx["process_key"] = "no_such_process"
        text = tool_error(
            await call(session, "route_gateway", {"gateway_id": "Gateway_Severity", "ctx": ctx}),
            "route_gateway",
        )
        expect("no_such_process" in text, f"the error does not name the key: {short(text)}")
        return {"message": short(text, 200)}

    await report.check("error: route_gateway with an unknown process key in ctx", unknown_key_in_ctx)

    async def harness_error():
        ctx = context(run_id, "hook_nope", {"severity": "low"})
        text = tool_error(
            await call(session, "evaluate_hook", {"hook_id": "hook_nope", "ctx": ctx}),
            "evaluate_hook",
        )
        try:
            err = json.loads(text)
        except ValueError:
            raise Failed(f"a harness error's text is not JSON: {short(text)}")
        expect(isinstance(err, dict), f"a harness error is not an object: {short(err)}")
        expect(err.get("element") == "hook_nope", f"element {err.get('element')!r}")
        expect("hook_nope" in str(err.get("message", "")), f"message {err.get('message')!r}")
        return err

    await report.check("error: a harness error is JSON {element, message}", harness_error)

    async def malformed(tool: str, args_: Any):
        try:
            result = await call(session, tool, args_)
        except MCPError as e:
            return {"as": "json-rpc error", "code": e.code, "message": short(e.message, 200)}
        text = tool_error(result, tool)
        return {"as": "tool error (isError)", "message": short(text, 200)}

    await report.check(
        "error: execute_task without ctx and with a numeric task_id",
        lambda: malformed("execute_task", {"task_id": 5}),
    )
    await report.check(
        "error: route_gateway whose ctx lacks its required fields",
        lambda: malformed("route_gateway", {"gateway_id": "Gateway_Severity", "ctx": {"run_id": 1}}),
    )
    await report.check(
        "error: a tool that does not exist",
        lambda: malformed("no_such_tool", {}),
    )

    # The session survives its errors.
    async def still_alive():
        data = structured(await call(session, "get_flow_annotations", {"process_key": PROCESS_KEY}), "get_flow_annotations")
        expect(data.get("process_key") == PROCESS_KEY, "the session answers wrongly after errors")

    await report.check("the session still answers after the errors", still_alive)


async def second_session(report: Report, url: str, token) -> None:
    """A new session after the first one ended (the server is not single-use)."""

    async def again():
        async with http_client(token) as client:
            async with streamable_http_client(url, http_client=client) as (read, write):
                async with ClientSession(read, write, read_timeout_seconds=CALL_TIMEOUT) as session:
                    await session.initialize()
                    tools = await session.list_tools()
                    expect(len(tools.tools) == len(EXPECTED_TOOLS), f"{len(tools.tools)} tools")
                    data = structured(
                        await call(session, "get_flow_annotations", {"process_key": PROCESS_KEY}),
                        "get_flow_annotations",
                    )
                    expect(data.get("process_key") == PROCESS_KEY, "wrong annotations")

    await report.check("a second session after the first closed", again)


async def high_level_client(report: Report, url: str, token) -> None:
    """The SDK's high-level `Client` in its default mode: it probes `server/discover` and
    speaks the newest protocol the server accepts, else falls back to the handshake."""

    async def auto():
        async with http_client(token) as hc:
            transport = streamable_http_client(url, http_client=hc)
            async with Client(transport, read_timeout_seconds=CALL_TIMEOUT) as client:
                version = client.session.protocol_version
                tools = await client.list_tools()
                names = {t.name for t in tools.tools}
                expect(names == EXPECTED_TOOLS, f"tools: {sorted(names)}")
                ctx = context(f"interop-{uuid.uuid4().hex[:12]}", "Gateway_Severity", {"severity": "medium"})
                data = structured(
                    await client.call_tool("route_gateway", {"gateway_id": "Gateway_Severity", "ctx": ctx}),
                    "route_gateway",
                )
                expect(data.get("flows") == ["Flow_SeverityLow"], f"flows {data.get('flows')}")
                text = tool_error(
                    await client.call_tool("get_flow_annotations", {"process_key": "no_such_process"}),
                    "get_flow_annotations",
                )
                expect("no_such_process" in text, f"the error does not name the key: {short(text)}")
                return {"protocol_version": version}

    await report.check("the SDK's high-level Client (mode auto: server/discover, else initialize)", auto)


async def main_async(args, report: Report) -> None:
    token = None
    if args.token_env:
        token = os.environ.get(args.token_env)
        if not token:
            report.fail("token", f"--token-env {args.token_env}: the variable is not set or empty")
            return
    report.facts.update({"url": args.url, "sdk": f"mcp {metadata.version('mcp')}", "token": bool(token)})

    await raw_checks(report, args.url, token)
    try:
        async with http_client(token) as client:
            async with streamable_http_client(args.url, http_client=client) as (read, write):
                async with ClientSession(read, write, read_timeout_seconds=CALL_TIMEOUT) as session:
                    await session_checks(report, session, args)
    except Exception as e:  # connection or transport failure, or a failure at session close
        report.fail("session (transport)", describe(e))
    await second_session(report, args.url, token)
    await high_level_client(report, args.url, token)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("url")
    parser.add_argument("--scenario", help="incident_response scenario as JSON {name, inputs, expect}")
    parser.add_argument("--token-env", help="env var holding the bearer token")
    parser.add_argument(
        "--apps-dir",
        default=str(Path(__file__).resolve().parents[2] / "applications"),
        help="the demo apps folder (default: the repo's applications/)",
    )
    parser.add_argument("--timeout", type=float, default=300.0, help="overall limit in seconds")
    args = parser.parse_args()

    report = Report()
    sdk_log = logging.getLogger("mcp")
    sdk_log.addHandler(SdkWarnings(report))
    sdk_log.propagate = False

    async def bounded():
        with anyio.move_on_after(args.timeout) as scope:
            await main_async(args, report)
        if scope.cancelled_caught:
            report.fail("timeout", f"the checks did not finish within {args.timeout:.0f}s")

    anyio.run(bounded)
    failed = [c for c in report.checks if not c["ok"]]
    summary = {
        "ok": report.ok,
        "passed": len(report.checks) - len(failed),
        "failed": len(failed),
        **report.facts,
        "warnings": report.warnings,
        "checks": report.checks,
    }
    print(json.dumps(summary, indent=2, default=str))
    for w in report.warnings:
        print(f"WARNING: {w}", file=sys.stderr)
    for c in failed:
        print(f"FAILED: {c['name']}: {c['error']}", file=sys.stderr)
    return 0 if report.ok else 1


if __name__ == "__main__":
    sys.exit(main())
