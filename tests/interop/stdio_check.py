#!/usr/bin/env python3
"""Spawn `cuga-flo serve APP --stdio` with the official MCP Python SDK's stdio client.

    stdio_check.py [--process-key KEY] [--timeout S] -- CMD [ARGS...]

e.g. `stdio_check.py -- target/debug/cuga-flo serve incident_response --stdio`. Initializes,
lists the tools (the seven, each with an object inputSchema) and calls
get_flow_annotations for the app's process key. Prints a JSON summary on stdout; exits 1
when a check failed. The server's stderr goes to this script's stderr.
"""

import argparse
import json
import sys
from importlib import metadata

import anyio
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

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


def describe(exc: BaseException) -> str:
    if isinstance(exc, BaseExceptionGroup):
        return "; ".join(describe(e) for e in exc.exceptions)
    return f"{type(exc).__name__}: {exc}"


async def checks(args, summary: dict) -> None:
    failures = summary["failures"]
    params = StdioServerParameters(command=args.cmd[0], args=args.cmd[1:])
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write, read_timeout_seconds=60) as session:
            init = await session.initialize()
            summary["protocol_version"] = init.protocol_version
            summary["server"] = init.server_info.name

            tools = (await session.list_tools()).tools
            names = {t.name for t in tools}
            summary["tools"] = sorted(names)
            if names != EXPECTED_TOOLS:
                failures.append(
                    f"tools: missing {sorted(EXPECTED_TOOLS - names)}, "
                    f"unexpected {sorted(names - EXPECTED_TOOLS)}"
                )
            for t in tools:
                if not isinstance(t.input_schema, dict) or t.input_schema.get("type") != "object":
                    failures.append(f"`{t.name}`'s inputSchema is not of type object")

            result = await session.call_tool(
                "get_flow_annotations", {"process_key": args.process_key}
            )
            text = [c.text for c in result.content if getattr(c, "type", None) == "text"]
            if result.is_error:
                failures.append(f"get_flow_annotations answered isError=true: {text}")
            else:
                data = result.structured_content or {}
                summary["annotations"] = {
                    "process_key": data.get("process_key"),
                    "hooks": len(data.get("hooks", {})),
                    "step_budget": data.get("step_budget"),
                }
                if data.get("process_key") != args.process_key:
                    failures.append(f"get_flow_annotations: process_key {data.get('process_key')!r}")
                if not text or json.loads(text[0]) != data:
                    failures.append("get_flow_annotations: the text block differs from the structured content")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--process-key", default="incident_response_v1")
    parser.add_argument("--timeout", type=float, default=120.0, help="overall limit in seconds")
    parser.add_argument("cmd", nargs=argparse.REMAINDER, help="the server command (after --)")
    args = parser.parse_args()
    if args.cmd and args.cmd[0] == "--":
        args.cmd = args.cmd[1:]
    if not args.cmd:
        parser.error("give the server command after --")

    summary = {"cmd": args.cmd, "sdk": f"mcp {metadata.version('mcp')}", "failures": []}

    async def bounded():
        with anyio.move_on_after(args.timeout) as scope:
            try:
                await checks(args, summary)
            except Exception as e:
                summary["failures"].append(f"stdio session: {describe(e)}")
        if scope.cancelled_caught:
            summary["failures"].append(f"the checks did not finish within {args.timeout:.0f}s")

    anyio.run(bounded)
    summary["ok"] = not summary["failures"]
    print(json.dumps(summary, indent=2))
    for f in summary["failures"]:
        print(f"FAILED: {f}", file=sys.stderr)
    return 0 if summary["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
