#!/usr/bin/env bash
# Re-verify the tool-server fixtures (tests/tools/README.md) with the official SDK clients:
#   1. hr_server.py (MCP, stdio) with the MCP Python SDK's stdio_client + ClientSession;
#   2. tests/interop/mcp-js-server/server.mjs (MCP, streamable HTTP) with the MCP TypeScript
#      SDK's Client + StreamableHTTPClientTransport, and a request without the token (401);
#   3. credit_bureau.py (OpenAPI) with plain HTTP requests, against its spec's operationIds.
#
#   tests/tools/check_fixtures.sh [PYTHON [NPM_DIR]]
#
# PYTHON: a python with mcp==2.3.0 (default: what tests/interop/setup_venv.py prints).
# NPM_DIR: a folder where tests/interop/mcp-js-server's package-lock.json was installed with
# `npm ci` (default: the test suite's cache folder for it, installed there when missing).
# Check scripts are copied into NPM_DIR while they run (Node resolves ES modules from the
# script's folder) and removed afterwards. Ends with "N passed, N failed"; exit 1 on a failure.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
PYTHON=${1:-$(python3 "$ROOT/tests/interop/setup_venv.py")}
NPM_SRC="$ROOT/tests/interop/mcp-js-server"
if [[ $# -ge 2 ]]; then
  NPM_DIR=$2
else
  # The folder tests/suite/support/python.rs `npm_packages` uses: <cache>/<folder>-<FNV-1a of the lock>.
  CACHE=${CUGA_FLO_CACHE:-$HOME/.cache/cuga-flo}
  HASH=$(python3 -c 'import sys
h = 0xcbf29ce484222325
for b in open(sys.argv[1], "rb").read():
    h = ((h ^ b) * 0x100000001b3) % 2**64
print(f"{h:016x}")' "$NPM_SRC/package-lock.json")
  NPM_DIR="$CACHE/mcp-js-server-$HASH"
  if [[ ! -e "$NPM_DIR/node_modules/@modelcontextprotocol/sdk/package.json" ]]; then
    mkdir -p "$CACHE"
    WORK=$(mktemp -d "$CACHE/.npm-XXXXXX")
    cp "$NPM_SRC/package.json" "$NPM_SRC/package-lock.json" "$WORK/"
    (cd "$WORK" && npm ci --no-audit --no-fund --ignore-scripts >&2)
    mv "$WORK" "$NPM_DIR" 2>/dev/null || rm -rf "$WORK"
  fi
fi
NPM_DIR=$(cd "$NPM_DIR" && pwd)

TMP=$(mktemp -d)
PIDS=()
COPIED=()
cleanup() {
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  for f in "${COPIED[@]}"; do rm -f "$f"; done
  rm -rf "$TMP"
}
trap cleanup EXIT

# start NAME CMD...: run a server in the background, wait for its `listening URL` line, set URL.
start() {
  local name=$1
  shift
  "$@" >"$TMP/$name.out" 2>"$TMP/$name.err" &
  PIDS+=($!)
  LAST_PID=$!
  for _ in $(seq 600); do
    if grep -q '^listening ' "$TMP/$name.out"; then
      URL=$(sed -n 's/^listening //p' "$TMP/$name.out")
      return 0
    fi
    kill -0 "$LAST_PID" 2>/dev/null || break
    sleep 0.1
  done
  echo "$name did not get ready:" >&2
  cat "$TMP/$name.err" >&2
  return 1
}

# stopped NAME PID: SIGTERM, then the server must exit 0 within 10 s.
stopped() {
  kill -TERM "$2"
  for _ in $(seq 100); do
    if ! kill -0 "$2" 2>/dev/null; then
      wait "$2" && return 0
      echo "$1 exited $? on SIGTERM" >&2
      return 1
    fi
    sleep 0.1
  done
  echo "$1 did not stop within 10 s of SIGTERM" >&2
  return 1
}

PASSED=0
FAILED=0
verdict() {
  if [[ $2 -eq 0 ]]; then
    echo "ok: $1"
    PASSED=$((PASSED + 1))
  else
    echo "FAILED: $1"
    FAILED=$((FAILED + 1))
  fi
}

# 1. The HR server over stdio, with the MCP Python SDK.
cat >"$TMP/hr_check.py" <<'EOF'
import json, os, sys, anyio
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

server, tmp = sys.argv[1], sys.argv[2]
db, calls = os.path.join(tmp, "hr_db.json"), os.path.join(tmp, "hr_calls.jsonl")
HINTS = {  # tool -> (readOnlyHint, destructiveHint, idempotentHint)
    "lookup_employee": (True, False, True),
    "list_employees": (True, False, True),
    "revoke_access": (False, True, True),
    "send_notice": (False, False, False),
    "record_return": (False, False, True),
}

async def main():
    params = StdioServerParameters(command=sys.executable, args=[server], env={"HR_DB": db, "HR_CALL_LOG": calls})
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        tools = {t.name: t for t in (await session.list_tools()).tools}
        assert set(tools) == set(HINTS), sorted(tools)
        for name, tool in tools.items():
            a = tool.annotations
            print(f"  {name}: readOnly={a.read_only_hint} destructive={a.destructive_hint} "
                  f"idempotent={a.idempotent_hint} inputs={sorted(tool.input_schema['properties'])}")
            assert (a.read_only_hint, a.destructive_hint, a.idempotent_hint) == HINTS[name], name
            assert all(p.get("description") for p in tool.input_schema["properties"].values()), name

        async def call(name, **args):
            result = await session.call_tool(name, args)
            return result, result.content[0].text

        r, text = await call("lookup_employee", employee_id="E100")
        assert not r.is_error and json.loads(text)["name"] and r.structured_content["employee_id"] == "E100", text
        r, text = await call("lookup_employee", employee_id="E999")
        assert r.is_error and "no employee E999; known ids look like E100" in text, text
        r, text = await call("revoke_access", employee_id="E100", reason="leaving")
        assert not r.is_error and r.structured_content["revoked"], text
        r, text = await call("send_notice", employee_id="E100", message="Your last day is Friday.")
        assert r.structured_content["notice_number"] == 1, text
        r, text = await call("send_notice", employee_id="E100", message="Your last day is Friday.")
        assert r.structured_content["notice_number"] == 2, text
    saved = json.load(open(db))["employees"]["E100"]
    assert saved["status"] == "revoked" and saved["access"] == [] and len(saved["notices"]) == 2, saved
    logged = [json.loads(line) for line in open(calls)]
    assert [c["tool"] for c in logged] == ["lookup_employee", "lookup_employee", "revoke_access", "send_notice", "send_notice"], logged
    assert logged[1]["arguments"] == {"employee_id": "E999"} and all(isinstance(c["pid"], int) for c in logged), logged

anyio.run(main)
EOF
set +e
"$PYTHON" "$TMP/hr_check.py" "$ROOT/applications/hr_offboarding/servers/hr_server.py" "$TMP"
rc=$?
verdict "hr_server.py (MCP stdio, Python SDK $("$PYTHON" -c 'import importlib.metadata as m; print(m.version("mcp"))'))" $rc
set -e

# 2. The tickets server over streamable HTTP, with the MCP TypeScript SDK.
cat >"$TMP/tickets_check.mjs" <<'EOF'
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [url, token, callLog] = process.argv.slice(2);
const transport = new StreamableHTTPClientTransport(new URL(url), {
  requestInit: { headers: { Authorization: `Bearer ${token}` } },
});
const client = new Client({ name: "check-fixtures", version: "1.0.0" });
await client.connect(transport);
const hints = {
  create_ticket: [false, false, false],
  get_ticket: [true, false, true],
  close_ticket: [false, true, true],
};
const { tools } = await client.listTools();
assert.deepEqual(tools.map((t) => t.name).sort(), Object.keys(hints).sort());
for (const t of tools) {
  const a = t.annotations;
  console.log(`  ${t.name}: readOnly=${a.readOnlyHint} destructive=${a.destructiveHint} idempotent=${a.idempotentHint} inputs=${Object.keys(t.inputSchema.properties)}`);
  assert.deepEqual([a.readOnlyHint, a.destructiveHint, a.idempotentHint], hints[t.name], t.name);
}
const created = await client.callTool({ name: "create_ticket", arguments: { title: "Collect laptop", body: "E100 leaves Friday", priority: "high" } });
assert.equal(JSON.parse(created.content[0].text).ticket_id, "T-1");
const got = await client.callTool({ name: "get_ticket", arguments: { ticket_id: "T-1" } });
assert.equal(got.structuredContent.title, "Collect laptop");
const missing = await client.callTool({ name: "get_ticket", arguments: { ticket_id: "T-99" } });
assert.equal(missing.isError, true);
assert.match(missing.content[0].text, /no ticket T-99/);
const closed = await client.callTool({ name: "close_ticket", arguments: { ticket_id: "T-1", resolution: "collected" } });
assert.equal(closed.structuredContent.status, "closed");
await transport.terminateSession();
await client.close();

const anonymous = await fetch(url, {
  method: "POST",
  headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
  body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
});
assert.equal(anonymous.status, 401);
const logged = readFileSync(callLog, "utf8").trim().split("\n").map((l) => JSON.parse(l));
assert.deepEqual(logged.map((c) => c.tool), ["create_ticket", "get_ticket", "get_ticket", "close_ticket"]);
EOF
CHECK="$NPM_DIR/.check-tickets-$$.mjs"
SERVER="$NPM_DIR/.tickets-server-$$.mjs"
cp "$TMP/tickets_check.mjs" "$CHECK"
cp "$NPM_SRC/server.mjs" "$SERVER"
COPIED+=("$CHECK" "$SERVER")
check_tickets() {
  start tickets env TICKETS_TOKEN=check-token TICKETS_CALL_LOG="$TMP/tickets_calls.jsonl" node "$SERVER" 0 || return 1
  [[ $URL =~ ^http://127\.0\.0\.1:[0-9]+/mcp$ ]] || { echo "unexpected ready line: $URL" >&2; return 1; }
  node "$CHECK" "$URL" check-token "$TMP/tickets_calls.jsonl" || return 1
  stopped tickets "$LAST_PID"
}
set +e
check_tickets
rc=$?
verdict "server.mjs (MCP streamable HTTP, TypeScript SDK $(node -p "require('$NPM_DIR/node_modules/@modelcontextprotocol/sdk/package.json').version"))" $rc
set -e

# 3. The credit bureau, over plain HTTP, against its OpenAPI spec.
cat >"$TMP/bureau_check.py" <<'EOF'
import json, re, sys, urllib.error, urllib.request

url, token, spec, call_log = sys.argv[1:]

def call(method, path, body=None, auth=True):
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url + path, data=data, method=method)
    req.add_header("Content-Type", "application/json")
    if auth:
        req.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())

ids = re.findall(r"operationId:\s*(\w+)", open(spec).read())
assert sorted(ids) == ["createReport", "deleteReport", "getCreditScore", "listCustomers"], ids
status, score = call("GET", "/customers/1187/score")
assert status == 200 and 300 <= score["score"] <= 850 and score["band"] in ("poor", "fair", "good", "excellent"), score
assert call("GET", "/customers/5012/score")[0] == 404
status, listed = call("GET", "/customers?limit=2")
assert status == 200 and len(listed["customers"]) == 2, listed
status, report = call("POST", "/reports", {"customer_id": "1187", "summary": "approved"})
assert status == 201 and report["report_id"], report
assert call("DELETE", f"/reports/{report['report_id']}")[0] == 200
assert call("GET", "/customers", auth=False)[0] == 401
logged = [json.loads(line) for line in open(call_log)]
assert [c["operation"] for c in logged] == ["getCreditScore", "getCreditScore", "listCustomers", "createReport", "deleteReport", None], logged
print(f"  operations: {', '.join(ids)}")
EOF
check_bureau() {
  start bureau env BUREAU_TOKEN=check-token BUREAU_CALL_LOG="$TMP/bureau_calls.jsonl" python3 "$ROOT/applications/credit_check/servers/credit_bureau.py" 0 || return 1
  [[ $URL =~ ^http://127\.0\.0\.1:[0-9]+$ ]] || { echo "unexpected ready line: $URL" >&2; return 1; }
  python3 "$TMP/bureau_check.py" "$URL" check-token "$ROOT/applications/credit_check/config/credit_bureau.openapi.yaml" "$TMP/bureau_calls.jsonl" || return 1
  stopped bureau "$LAST_PID"
}
set +e
check_bureau
verdict "credit_bureau.py (OpenAPI 3.0.3, standard library)" $?
set -e

echo "$PASSED passed, $FAILED failed"
[[ $FAILED -eq 0 ]]
