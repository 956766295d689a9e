// The official A2A JavaScript SDK (@a2a-js/sdk, pinned in tests/interop/a2a-js/package.json)
// as a client of `cuga-flo serve --a2a` (tests/a2a_serve.rs): the card, a task streamed to
// input-required, the answer sent in the same task (SendMessage), the final artifact.
//
// Usage: node a2a_js_check.mjs BASE_URL [--v03]   (the a2a_claim fixture app's base URL)
// Prints one JSON object; exits 0 when every step worked.

import { randomUUID } from "node:crypto";
import {
  ClientFactory,
  ClientFactoryOptions,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
} from "@a2a-js/sdk/client";
import { Role, TaskState } from "@a2a-js/sdk";

const base = process.argv[2];
// --v03: speak A2A 0.3 (the SDK's legacy transport), as a 0.3 client would: from the
// card's 0.3 fields (`url`, `protocolVersion`), its 1.0 interfaces unread.
const v03 = process.argv.includes("--v03");

async function clientFor(base) {
  if (!v03) return new ClientFactory().createFromUrl(base);
  const legacy = { legacyCompat: { enabled: true } };
  const raw = await (await fetch(`${base}/.well-known/agent-card.json`)).json();
  delete raw.supportedInterfaces;
  const resolver = new DefaultAgentCardResolver(legacy);
  const factory = new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [new JsonRpcTransportFactory(legacy)],
      cardResolver: resolver,
    }),
  );
  return factory.createFromAgentCard(resolver.normalizeAgentCard(raw));
}

function message(parts, taskId = "") {
  return {
    message: {
      messageId: randomUUID(),
      contextId: "",
      taskId,
      role: Role.ROLE_USER,
      parts,
      metadata: undefined,
      extensions: [],
      referenceTaskIds: [],
    },
  };
}

const data = (value) => ({ content: { $case: "data", value }, mediaType: "application/json" });
const text = (value) => ({ content: { $case: "text", value }, mediaType: "text/plain" });
const stateName = (s) => TaskState[s] ?? String(s);

function artifactData(task) {
  const out = {};
  for (const a of task.artifacts ?? []) {
    for (const p of a.parts ?? []) {
      if (p.content?.$case === "data") Object.assign(out, p.content.value);
    }
  }
  return out;
}

try {
  const client = await clientFor(base);
  const card = await client.getAgentCard();
  const events = [];
  let taskId = "";
  for await (const ev of client.sendMessageStream(message([data({ amount: 640, claimant: "Lin" })]))) {
    const p = ev.payload;
    if (p?.$case === "task") {
      taskId = p.value.id;
      events.push(["task", stateName(p.value.status?.state)]);
    } else if (p?.$case === "statusUpdate") {
      events.push(["status", stateName(p.value.status?.state)]);
    } else if (p?.$case === "artifactUpdate") {
      events.push(["artifact", p.value.artifact?.name]);
    }
  }
  const waiting = await client.getTask({ tenant: "", id: taskId, historyLength: 0 });
  const approved = await client.sendMessage(message([data({ approved: true })], taskId));
  const paid = await client.sendMessage(message([text("bank transfer")], taskId));
  console.log(
    JSON.stringify({
      ok: true,
      name: card.name,
      interface: card.supportedInterfaces?.[0]?.protocolVersion,
      streaming: card.capabilities?.streaming,
      events,
      waiting: stateName(waiting.status?.state),
      after_review: stateName(approved.status?.state),
      final: stateName(paid.status?.state),
      variables: artifactData(paid),
    }),
  );
} catch (e) {
  console.log(JSON.stringify({ ok: false, error: String(e?.stack ?? e) }));
  process.exit(1);
}
