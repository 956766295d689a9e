// Smoke check for a running OpenAI-compatible server (this shim or any other):
//
//   node tests/llm/server/smoke.mjs http://127.0.0.1:PORT/v1 [rounds]
//
// Sends a gateway-style decision with a reason-first schema, in OpenAI's json_schema form and in
// the older json_object+schema form, plus a few requests that must fail with 400. Checks that the
// answers parse, that `flow` is one of the options and that `usage` is filled in; prints the
// latency of each request. Exits non-zero on the first failed check. Uses only Node's built-ins.
const base = (process.argv[2] ?? process.env.CUGA_FLO_TEST_LLM_URL ?? "").replace(/\/+$/, "");
const rounds = Number(process.argv[3] ?? 1);
if (!base) {
    console.error("usage: node smoke.mjs BASE_URL [rounds]   (e.g. http://127.0.0.1:8080/v1)");
    process.exit(2);
}

const flows = ["Flow_approve", "Flow_reject"];
const schema = {
    type: "object",
    properties: {
        reason: {type: "string"},
        flow: {type: "string", enum: flows}
    },
    required: ["reason", "flow"],
    additionalProperties: false
};
const messages = [
    {
        role: "system",
        content: "You are the decision engine of a business process. At an exclusive gateway you pick exactly one " +
            "outgoing flow by its id and follow the policy to the letter. Before answering, check each condition " +
            "of the policy against the variables in one short sentence."
    },
    {
        role: "user",
        content: [
            "Policy: approve if credit_score > 0.6 and no fraud flag; otherwise reject.",
            "Variables: {\"credit_score\": 0.72, \"fraud_flag\": false}",
            "Outgoing flows:",
            "- Flow_approve: approve the application",
            "- Flow_reject: reject the application",
            "Reply as JSON: {\"reason\": \"<one sentence checking the policy>\", \"flow\": \"<flow id>\"}"
        ].join("\n")
    }
];
const forms = {
    json_schema: {type: "json_schema", json_schema: {name: "gateway_decision", strict: true, schema}},
    json_object: {type: "json_object", schema}
};

let failures = 0;
function check(ok, what) {
    if (!ok) {
        failures++;
        console.log(`FAIL ${what}`);
    }
    return ok;
}

async function post(body) {
    const started = performance.now();
    const res = await fetch(`${base}/chat/completions`, {
        method: "POST",
        headers: {"content-type": "application/json", authorization: "Bearer unused"},
        body: typeof body === "string" ? body : JSON.stringify(body)
    });
    const json = await res.json().catch(() => null);
    return {status: res.status, json, ms: Math.round(performance.now() - started)};
}

const models = await (await fetch(`${base}/models`)).json();
check(Array.isArray(models?.data) && models.data.length > 0, "GET /models lists a model");
const model = models.data?.[0]?.id ?? "local";
console.log(`model ${model}`);

const picks = {};
for (let round = 0; round < rounds; round++) {
    for (const [form, responseFormat] of Object.entries(forms)) {
        const {status, json, ms} = await post({model, messages, response_format: responseFormat, temperature: 0, max_tokens: 200});
        const content = json?.choices?.[0]?.message?.content;
        let answer = null;
        try { answer = JSON.parse(content); } catch { /* reported below */ }
        const usage = json?.usage;
        const ok = check(status === 200, `${form}: HTTP ${status} ${JSON.stringify(json?.error ?? "")}`) &&
            check(answer !== null && typeof answer === "object", `${form}: content parses as a JSON object: ${content}`) &&
            check(typeof answer.reason === "string", `${form}: reason is a string`) &&
            check(flows.includes(answer.flow), `${form}: flow ${JSON.stringify(answer.flow)} is one of ${flows}`) &&
            check(Number.isInteger(usage?.prompt_tokens) && usage.prompt_tokens > 0 &&
                Number.isInteger(usage?.completion_tokens) && usage.completion_tokens > 0 &&
                usage.total_tokens === usage.prompt_tokens + usage.completion_tokens, `${form}: usage ${JSON.stringify(usage)}`);
        if (ok) picks[answer.flow] = (picks[answer.flow] ?? 0) + 1;
        console.log(`${form}: ${ms} ms, usage ${usage?.prompt_tokens}+${usage?.completion_tokens}, ` +
            `finish ${json?.choices?.[0]?.finish_reason}, answer ${content}`);
    }
}
console.log(`picks ${JSON.stringify(picks)} (Flow_approve is right for this policy)`);

// Requests that must be refused with 400, not crash the server.
const bad = {
    "malformed JSON": "{not json",
    "no messages": {model, messages: []},
    "unknown role": {model, messages: [{role: "robot", content: "hi"}]},
    "unknown response_format type": {model, messages, response_format: {type: "xml"}},
    "schema without grammar": {model, messages, response_format: {type: "json_schema", json_schema: {schema: {allOf: [{type: "string"}]}}}},
    "negative max_tokens": {model, messages, max_tokens: -1}
};
for (const [what, body] of Object.entries(bad)) {
    const {status, json} = await post(body);
    check(status === 400 && typeof json?.error?.message === "string", `${what}: expected a 400 JSON error, got ${status} ${JSON.stringify(json)}`);
    if (what === "schema without grammar")
        check(/response_format/.test(json?.error?.message ?? ""), `${what}: message mentions response_format`);
}
const after = await fetch(`${base}/models`);
check(after.status === 200, "server still answers after the bad requests");

console.log(failures === 0 ? "smoke: ok" : `smoke: ${failures} check(s) failed`);
process.exit(failures === 0 ? 0 : 1);
