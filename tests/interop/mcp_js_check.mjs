// The official MCP TypeScript SDK (@modelcontextprotocol/sdk, pinned in
// tests/interop/mcp-js/package.json) as a client of `cuga-flo serve` (tests/interop.rs):
// over streamable HTTP with a bearer token, and over stdio by spawning the server.
//
// Usage:
//   node mcp_js_check.mjs http URL SCENARIO.json   (token in $CUGA_FLO_INTEROP_TOKEN)
//   node mcp_js_check.mjs stdio -- COMMAND ARGS...
//
// The SDK's Client checks every `structuredContent` against the tool's `outputSchema`
// (a call whose content does not match its declared schema throws), so listing the tools
// and calling them is also a check of the schemas cuga-flo declares.
//
// Prints one JSON object {checks: [{name, ok, detail|error}], run_id?}; exits 1 when a
// check failed.

import { randomUUID } from "node:crypto";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { readFileSync } from "node:fs";

const PROCESS_KEY = "incident_response_v1";
const EXPECTED_TOOLS = [
  "deliver_message",
  "evaluate_hook",
  "execute_task",
  "get_bpmn_process",
  "get_flow_annotations",
  "register_flow",
  "route_gateway",
  "run_process",
  "send_signal",
];
const CALL_TIMEOUT_MS = 60_000;
const RUN_TIMEOUT_MS = 120_000;

const checks = [];
const facts = {};

async function check(name, fn) {
  try {
    const detail = await fn();
    checks.push(detail === undefined ? { name, ok: true } : { name, ok: true, detail });
    return detail;
  } catch (e) {
    checks.push({ name, ok: false, error: String(e?.stack ?? e) });
    return undefined;
  }
}

function expect(cond, message) {
  if (!cond) throw new Error(message);
}

/** The structured content of a successful call, checked against its text block. */
function structured(result, tool) {
  expect(!result.isError, `${tool} answered isError: ${JSON.stringify(result.content)}`);
  const data = result.structuredContent;
  expect(data && typeof data === "object", `${tool} returned no structured content`);
  const text = (result.content ?? []).find((c) => c.type === "text");
  expect(text, `${tool} returned no text block`);
  expect(
    JSON.stringify(JSON.parse(text.text)) === JSON.stringify(data),
    `${tool}'s text block differs from its structured content`,
  );
  return data;
}

async function common(client) {
  await check("initialize: server info and tools capability", async () => {
    const info = client.getServerVersion();
    const caps = client.getServerCapabilities();
    expect(info?.name, "no server name");
    expect(caps?.tools, "the server does not declare the tools capability");
    return { name: info.name, version: info.version };
  });
  await check("tools/list: the bridge's tools with object schemas", async () => {
    const { tools } = await client.listTools();
    const names = tools.map((t) => t.name).sort();
    for (const want of EXPECTED_TOOLS) expect(names.includes(want), `no tool ${want} in ${names}`);
    for (const t of tools) {
      expect(t.inputSchema?.type === "object", `${t.name}: inputSchema is not an object schema`);
      expect(t.description, `${t.name}: no description`);
    }
    return { tools: names.length };
  });
  await check("get_bpmn_process", async () => {
    const data = structured(
      await client.callTool({ name: "get_bpmn_process", arguments: { process_key: PROCESS_KEY } },
        undefined, { timeout: CALL_TIMEOUT_MS }),
      "get_bpmn_process",
    );
    const process = data.process ?? data;
    expect(Array.isArray(process.nodes) && process.nodes.length > 0, "no nodes");
    expect(Array.isArray(process.flows) && process.flows.length > 0, "no flows");
    return { nodes: process.nodes.length, flows: process.flows.length };
  });
  await check("get_flow_annotations", async () => {
    const data = structured(
      await client.callTool({ name: "get_flow_annotations", arguments: { process_key: PROCESS_KEY } },
        undefined, { timeout: CALL_TIMEOUT_MS }),
      "get_flow_annotations",
    );
    return { keys: Object.keys(data).sort() };
  });
  await check("error: an unknown process key is a tool error naming it", async () => {
    const result = await client.callTool(
      { name: "get_bpmn_process", arguments: { process_key: "no_such_process" } },
      undefined, { timeout: CALL_TIMEOUT_MS });
    expect(result.isError, "get_bpmn_process of an unknown key did not fail");
    const text = (result.content ?? []).map((c) => c.text ?? "").join("\n");
    expect(text.includes("no_such_process"), `the error does not name the key: ${text}`);
  });
  await check("error: a call with a missing argument is refused", async () => {
    let refused = false;
    try {
      const result = await client.callTool({ name: "get_bpmn_process", arguments: {} },
        undefined, { timeout: CALL_TIMEOUT_MS });
      refused = result.isError === true;
    } catch (e) {
      refused = true; // a JSON-RPC error (invalid params) is as good as a tool error
    }
    expect(refused, "get_bpmn_process without process_key was accepted");
  });
}

async function overHttp(url, scenarioFile) {
  const token = process.env.CUGA_FLO_INTEROP_TOKEN;
  const scenario = JSON.parse(readFileSync(scenarioFile, "utf8"));
  await check("http: a client without the token is refused", async () => {
    const client = new Client({ name: "cuga-flo-js-check", version: "1" });
    let refused = false;
    try {
      await client.connect(new StreamableHTTPClientTransport(new URL(url)));
    } catch (e) {
      refused = true;
      // StreamableHTTPError carries the HTTP status as `code`.
      expect(e?.code === 401, `refused, but not with 401 (code ${e?.code}): ${e}`);
    }
    expect(refused, "connected without a token");
  });
  const client = new Client({ name: "cuga-flo-js-check", version: "1" });
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
  await client.connect(transport);
  await check("http: the session has an id", async () => {
    expect(transport.sessionId, "no Mcp-Session-Id");
  });
  await common(client);
  const runId = `js-${randomUUID()}`;
  await check(`run_process: scenario ${scenario.name} as it expects`, async () => {
    const data = structured(
      await client.callTool(
        { name: "run_process", arguments: { process_key: PROCESS_KEY, run_id: runId, variables: scenario.inputs ?? {} } },
        undefined, { timeout: RUN_TIMEOUT_MS }),
      "run_process",
    );
    const want = scenario.expect ?? {};
    expect(data.run_id === runId, `run_id ${data.run_id}, not ${runId}`);
    if (want.status) expect(data.status === want.status, `status ${data.status}, not ${want.status} (${data.message})`);
    if (want.path) expect(JSON.stringify(data.path) === JSON.stringify(want.path), `path ${JSON.stringify(data.path)}, not ${JSON.stringify(want.path)}`);
    for (const [k, v] of Object.entries(want.variables ?? {})) {
      expect(JSON.stringify(data.variables?.[k]) === JSON.stringify(v),
        `variable ${k}: ${JSON.stringify(data.variables?.[k])}, not ${JSON.stringify(v)}`);
    }
    facts.run_id = runId;
    return { status: data.status, steps: data.steps };
  });
  await client.close();
}

async function overStdio(command, args) {
  const client = new Client({ name: "cuga-flo-js-check", version: "1" });
  const transport = new StdioClientTransport({ command, args, stderr: "inherit", env: { ...process.env } });
  await client.connect(transport);
  await common(client);
  await client.close();
}

const [mode, ...rest] = process.argv.slice(2);
try {
  if (mode === "http") await overHttp(rest[0], rest[1]);
  else if (mode === "stdio") await overStdio(rest[1], rest.slice(2));
  else throw new Error(`usage: mcp_js_check.mjs http URL SCENARIO | stdio -- COMMAND ARGS...`);
} catch (e) {
  checks.push({ name: `${mode}: session`, ok: false, error: String(e?.stack ?? e) });
}
const ok = checks.length > 0 && checks.every((c) => c.ok);
console.log(JSON.stringify({ ok, checks, ...facts }));
process.exit(ok ? 0 : 1);
