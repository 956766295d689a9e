// A "tickets" service as an MCP server over streamable HTTP: a demo and test fixture for
// cuga-flo's agents that call tools. Not a real ticketing system; tickets live in memory.
//
// Written with the official MCP TypeScript SDK (@modelcontextprotocol/sdk, pinned with zod in
// package.json / package-lock.json beside this file): McpServer + StreamableHTTPServerTransport
// on node:http, stateful sessions (Mcp-Session-Id), one McpServer per session, tickets shared.
// Node resolves the SDK from the folder the script is in, so copy this file into the folder
// where that package-lock.json was installed (`npm ci`) and run it there:
//
//   node server.mjs [PORT]     (PORT, else $TICKETS_PORT, else 0 = any free port)
//
// Binds 127.0.0.1 and prints one stdout line when ready: `listening http://127.0.0.1:PORT/mcp`.
// Environment:
//   TICKETS_TOKEN     when set, a request without `Authorization: Bearer <token>` gets 401
//   TICKETS_CALL_LOG  when set, every tools/call appends one JSON line {"tool", "arguments",
//                     "pid"} to this file before it runs (fsynced), so tests can count calls
// Tools: create_ticket, get_ticket (read-only), close_ticket (destructive, idempotent); an
// unknown ticket id is a tool error (isError: true). Stops cleanly on SIGTERM or SIGINT.
// Logs go to stderr only.

import { randomUUID, timingSafeEqual } from "node:crypto";
import { closeSync, fsyncSync, openSync, writeSync } from "node:fs";
import { createServer } from "node:http";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { z } from "zod";

const PORT = Number(process.argv[2] ?? process.env.TICKETS_PORT ?? 0);
const TOKEN = process.env.TICKETS_TOKEN || null;
const CALL_LOG = process.env.TICKETS_CALL_LOG || null;

const tickets = new Map(); // ticket_id -> ticket, shared by every session
let lastNumber = 0;

function recordCall(params) {
  if (!CALL_LOG) return;
  const line = JSON.stringify({ tool: params?.name, arguments: params?.arguments ?? {}, pid: process.pid }) + "\n";
  const fd = openSync(CALL_LOG, "a");
  try {
    writeSync(fd, line);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

const ticketShape = {
  ticket_id: z.string(),
  title: z.string(),
  body: z.string(),
  priority: z.enum(["low", "normal", "high"]),
  status: z.enum(["open", "closed"]),
  resolution: z.string().nullable(),
  already_closed: z.boolean().optional(),
};
const ticketId = z.string().describe("The ticket's id, e.g. T-1.");

function answer(data) {
  return { content: [{ type: "text", text: JSON.stringify(data) }], structuredContent: data };
}

function noTicket(id) {
  return { content: [{ type: "text", text: `no ticket ${id}; ticket ids look like T-1` }], isError: true };
}

function newServer() {
  const server = new McpServer({ name: "tickets", version: "1.0.0" });
  server.registerTool(
    "create_ticket",
    {
      title: "Create a ticket",
      description: "Open a new ticket; every call opens another one. Returns it with its ticket_id (T-1, T-2, ...).",
      inputSchema: {
        title: z.string().min(1).describe("A one-line summary."),
        body: z.string().describe("What happened and what is needed."),
        priority: z.enum(["low", "normal", "high"]).describe("How urgent the ticket is."),
      },
      outputSchema: ticketShape,
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    },
    async ({ title, body, priority }) => {
      const ticket = { ticket_id: `T-${++lastNumber}`, title, body, priority, status: "open", resolution: null };
      tickets.set(ticket.ticket_id, ticket);
      return answer(ticket);
    },
  );
  server.registerTool(
    "get_ticket",
    {
      title: "Get a ticket",
      description: "One ticket: its title, body, priority, status (open or closed) and resolution.",
      inputSchema: { ticket_id: ticketId },
      outputSchema: ticketShape,
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    },
    async ({ ticket_id }) => (tickets.has(ticket_id) ? answer(tickets.get(ticket_id)) : noTicket(ticket_id)),
  );
  server.registerTool(
    "close_ticket",
    {
      title: "Close a ticket",
      description: "Close a ticket with a resolution. Closing a closed ticket changes nothing (already_closed: true).",
      inputSchema: {
        ticket_id: ticketId,
        resolution: z.string().describe("How the ticket was resolved."),
      },
      outputSchema: ticketShape,
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    },
    async ({ ticket_id, resolution }) => {
      const ticket = tickets.get(ticket_id);
      if (!ticket) return noTicket(ticket_id);
      const already = ticket.status === "closed";
      if (!already) Object.assign(ticket, { status: "closed", resolution });
      return answer({ ...ticket, already_closed: already });
    },
  );
  return server;
}

function authorized(req) {
  if (!TOKEN) return true;
  const given = Buffer.from(req.headers.authorization ?? "");
  const wanted = Buffer.from(`Bearer ${TOKEN}`);
  return given.length === wanted.length && timingSafeEqual(given, wanted);
}

function refuse(res, status, message, headers = {}) {
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(JSON.stringify({ jsonrpc: "2.0", error: { code: -32000, message }, id: null }));
}

const sessions = new Map(); // Mcp-Session-Id -> transport

async function handle(req, res) {
  if (!authorized(req)) return refuse(res, 401, "unauthorized", { "www-authenticate": "Bearer" });
  if (new URL(req.url, "http://127.0.0.1").pathname !== "/mcp") return refuse(res, 404, "not found; the endpoint is /mcp");
  const sessionId = req.headers["mcp-session-id"];
  let transport = sessionId && sessions.get(sessionId);
  if (sessionId && !transport) return refuse(res, 404, `unknown session ${sessionId}`);
  if (!transport) {
    // A new session; the transport itself answers 400 to anything but an initialize.
    transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: randomUUID,
      onsessioninitialized: (id) => sessions.set(id, transport),
      onsessionclosed: (id) => sessions.delete(id),
    });
    const opened = transport;
    opened.onclose = () => opened.sessionId && sessions.delete(opened.sessionId);
    await newServer().connect(opened);
    // Every tools/call is logged before the SDK validates or runs it.
    const deliver = opened.onmessage;
    opened.onmessage = (message, extra) => {
      if (message?.method === "tools/call") recordCall(message.params);
      deliver?.(message, extra);
    };
  }
  await transport.handleRequest(req, res);
}

const http = createServer((req, res) => {
  handle(req, res).catch((e) => {
    console.error(`tickets: ${req.method} ${req.url}: ${e?.stack ?? e}`);
    if (!res.headersSent) refuse(res, 500, "internal error");
    else res.end();
  });
});

http.listen(PORT, "127.0.0.1", () => {
  process.stdout.write(`listening http://127.0.0.1:${http.address().port}/mcp\n`);
});

async function stop(signal) {
  console.error(`tickets: ${signal}, stopping`);
  await Promise.allSettled([...sessions.values()].map((t) => t.close()));
  http.close(() => process.exit(0));
  http.closeAllConnections();
}
process.once("SIGTERM", () => stop("SIGTERM"));
process.once("SIGINT", () => stop("SIGINT"));
