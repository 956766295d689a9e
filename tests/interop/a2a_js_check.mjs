// The official A2A JavaScript SDK (@a2a-js/sdk, pinned in tests/interop/a2a-js/package.json)
// as a client of `cuga-flo serve --a2a` (tests/a2a_serve.rs): the card, a task streamed to
// input-required, the answer sent in the same task (SendMessage), the final artifact.
//
// Usage: node a2a_js_check.mjs BASE_URL   (the a2a_claim fixture app's base URL)
// Prints one JSON object; exits 0 when every step worked.

import { randomUUID } from "node:crypto";
import { ClientFactory } from "@a2a-js/sdk/client";
import { Role, TaskState } from "@a2a-js/sdk";

const base = process.argv[2];

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
  const client = await new ClientFactory().createFromUrl(base);
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
