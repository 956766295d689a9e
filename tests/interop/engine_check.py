#!/usr/bin/env python3
"""Drive an external engine's `run_process` (engine.py) against a cuga-flo bridge.

    engine_check.py --engine URL --bridge URL [--token-env VAR] --process-key KEY
                    --scenario FILE.json [--run-id ID] [--timeout SECONDS] [--expect-failure]

--engine      the engine's MCP endpoint (`http://127.0.0.1:PORT/mcp`, engine.py's listening line).
--bridge      cuga-flo's MCP endpoint (`serve --http`), passed to the engine as `bridge.url`.
--token-env   the variable holding the bridges' bearer token, passed as `bridge.token`.
--scenario    {"name", "inputs", "expect": {"status", "path", "variables"}} (tests/suite/external_engine.rs
              writes it from a demo scenario's YAML).
--expect-failure
              the run must not complete: the result must be `failed` with a message, or the
              call a tool error (the bridge is broken on purpose); `expect` is not checked.

Several runs in one process (the SDK's import alone costs a CPU-second or two): repeat
--bridge and --scenario (and --process-key, unless one key serves them all); the runs go one
after another over one session with the engine.

Calls `run_process` with each scenario's inputs, checks the result's status, path and the
variables `expect` names (as the structured content, and that the text block says the same),
prints a JSON summary on stdout ({"ok", "runs": [...]}), exits 1 on a mismatch or an error.
"""

import argparse
import json
import os
import sys
import time
import uuid
from pathlib import Path

import anyio
import httpx2
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client


def describe(exc: BaseException) -> str:
    if isinstance(exc, BaseExceptionGroup):
        return "; ".join(describe(e) for e in exc.exceptions)
    return f"{type(exc).__name__}: {exc}"


async def run_one(session: ClientSession, args, bridge: dict, key: str, scenario: dict, summary: dict) -> list:
    """Call run_process once; return the mismatches (empty: as expected)."""
    problems = []
    run_args = {"process_key": key, "run_id": summary["run_id"],
                "variables": scenario.get("inputs") or {}, "bridge": bridge}
    started = time.perf_counter()
    result = await session.call_tool("run_process", run_args, read_timeout_seconds=args.timeout)
    summary["run_ms"] = round((time.perf_counter() - started) * 1000, 1)
    text = "\n".join(c.text for c in result.content if getattr(c, "type", None) == "text")
    if result.is_error:
        summary["tool_error"] = text
        return [] if args.expect_failure else [f"run_process answered a tool error: {text}"]
    data = result.structured_content
    if not isinstance(data, dict):
        return [f"run_process returned no structured content (text: {text[:300]})"]
    try:
        if json.loads(text) != data:
            problems.append("the text block differs from the structured content")
    except ValueError:
        problems.append(f"the text block is not JSON: {text[:300]}")
    summary["result"] = {k: data.get(k) for k in ("run_id", "status", "message", "steps", "path")}
    missing = [k for k in ("run_id", "status", "message", "variables", "steps", "path") if k not in data]
    if missing:
        problems.append(f"the result lacks {missing}")
    if data.get("run_id") != summary["run_id"]:
        problems.append(f"run_id {data.get('run_id')!r}, not {summary['run_id']!r}")
    if args.expect_failure:
        if data.get("status") != "failed" or not data.get("message"):
            problems.append(f"expected a failed run with a message, got {data.get('status')!r}: {data.get('message')!r}")
        return problems
    want = scenario.get("expect") or {}
    if "status" in want and data.get("status") != want["status"]:
        problems.append(f"status {data.get('status')!r}, not {want['status']!r} (message: {data.get('message')})")
    if "path" in want and data.get("path") != want["path"]:
        problems.append(f"path {data.get('path')}, not {want['path']}")
    variables = data.get("variables") or {}
    wrong = {k: {"expected": v, "got": variables.get(k, "<absent>")}
             for k, v in (want.get("variables") or {}).items() if variables.get(k, object()) != v}
    if wrong:
        problems.append(f"variables differ from the scenario's expect: {json.dumps(wrong)}")
    if data.get("steps") != len(data.get("path") or []):
        problems.append(f"steps {data.get('steps')} is not the path's length {len(data.get('path') or [])}")
    return problems


async def check_all(args, token, runs: list) -> None:
    timeout = httpx2.Timeout(30.0, read=args.timeout)
    async with httpx2.AsyncClient(timeout=timeout) as http:
        async with streamable_http_client(args.engine, http_client=http) as (read, write):
            async with ClientSession(read, write, read_timeout_seconds=args.timeout) as session:
                await session.initialize()
                tools = sorted(t.name for t in (await session.list_tools()).tools)
                for run in runs:
                    summary = run["summary"]
                    if "run_process" not in tools:
                        summary["problems"] = [f"the engine has no run_process tool: {tools}"]
                        continue
                    bridge = {"url": run["bridge"], **({"token": token} if token else {})}
                    try:
                        summary["problems"] = await run_one(session, args, bridge, summary["process_key"],
                                                            run["scenario"], summary)
                    except Exception as e:
                        summary["problems"] = [f"calling the engine failed: {describe(e)}"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--engine", required=True)
    parser.add_argument("--bridge", required=True, action="append")
    parser.add_argument("--token-env")
    parser.add_argument("--process-key", required=True, action="append")
    parser.add_argument("--scenario", required=True, action="append")
    parser.add_argument("--run-id", default=None, help="the run id (one run only)")
    parser.add_argument("--timeout", type=float, default=240.0, help="seconds for each run_process")
    parser.add_argument("--expect-failure", action="store_true")
    args = parser.parse_args()

    n = len(args.scenario)
    keys = args.process_key * n if len(args.process_key) == 1 else args.process_key
    if len(args.bridge) != n or len(keys) != n or (args.run_id and n != 1):
        parser.error("give one --bridge (and one --process-key, or a single one) per --scenario; --run-id for one run only")
    token = None
    if args.token_env:
        token = os.environ.get(args.token_env)
        if not token:
            print(f"engine_check: --token-env {args.token_env}: the variable is not set", file=sys.stderr)
            return 2
    runs = []
    for bridge, key, path in zip(args.bridge, keys, args.scenario):
        scenario = json.loads(Path(path).read_text())
        summary = {"scenario": scenario.get("name"), "process_key": key, "bridge": bridge,
                   "run_id": args.run_id or f"engine-{uuid.uuid4().hex[:12]}",
                   "problems": ["not run"]}
        runs.append({"bridge": bridge, "scenario": scenario, "summary": summary})

    async def bounded() -> None:
        limit = (args.timeout + 10) * n
        with anyio.move_on_after(limit) as scope:
            try:
                await check_all(args, token, runs)
            except Exception as e:
                for run in runs:
                    if run["summary"]["problems"] == ["not run"]:
                        run["summary"]["problems"] = [f"the session with the engine failed: {describe(e)}"]
        if scope.cancelled_caught:
            for run in runs:
                if run["summary"]["problems"] == ["not run"]:
                    run["summary"]["problems"] = [f"no answer within {limit:.0f}s"]

    anyio.run(bounded)
    summaries = [r["summary"] for r in runs]
    for summary in summaries:
        summary["ok"] = not summary["problems"]
    ok = all(s["ok"] for s in summaries)
    print(json.dumps({"ok": ok, "engine": args.engine, "runs": summaries}, indent=2, default=str))
    for summary in summaries:
        for p in summary["problems"]:
            print(f"FAILED: {summary['scenario']}: {p}", file=sys.stderr)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
