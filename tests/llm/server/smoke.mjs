// Smoke check for a running OpenAI-compatible server (this shim or any other):
//
//   node tests/llm/server/smoke.mjs http://127.0.0.1:PORT/v1 [rounds]
//
// Sends a gateway-style decision with a reason-first schema, in OpenAI's json_schema form and in
// the older json_object+schema form; a tool-using task (a lookup tool, then its result); and a few
// requests that must fail with 400. Checks that the answers parse, that `flow` is one of the
// options, that tool calls are well formed and that `usage` is filled in; prints the latency of
// each request and whether the model called the tool and used its result (reported, not
// asserted, except that a named tool_choice must give a call and "none" must not). Exits non-zero
// if a check failed. Uses only Node's built-ins.
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

// Tool calling: a task agent that should look something up first, then answer from the result.
const tools = [{
    type: "function",
    function: {
        name: "hr_lookup_employee",
        description: "Look up an employee by id: name, department and manager.",
        parameters: {type: "object", properties: {employee_id: {type: "string"}}, required: ["employee_id"], additionalProperties: false}
    }
}];
const taskSchema = {
    type: "object",
    properties: {department: {type: "string"}, manager: {type: "string"}, reason: {type: "string"}},
    required: ["department", "manager", "reason"],
    additionalProperties: false
};
const taskMessages = [
    {
        role: "system",
        content: "You fulfil task 'Look up the employee' in a business process. Use the tools to look things up; never " +
            "invent data. When you have what you need, answer with JSON matching the schema."
    },
    {role: "user", content: "Inputs: {\"employee_id\": \"E101\"}. Outputs to give: department (string), manager (string)."}
];
const taskFormat = {type: "json_schema", json_schema: {name: "task_outputs", schema: taskSchema}};
const employee = {employee_id: "E101", name: "Ada", department: "Finance", manager: "Grace"};

// Checks an answer that may be a tool call; returns the call or null (then the content was checked).
function checkToolReply(what, {status, json, ms}) {
    const choice = json?.choices?.[0];
    const calls = choice?.message?.tool_calls;
    console.log(`${what}: ${ms} ms, usage ${json?.usage?.prompt_tokens}+${json?.usage?.completion_tokens}, finish ${choice?.finish_reason}, ` +
        (calls ? `tool_calls ${JSON.stringify(calls.map((c) => c.function))}` : `content ${choice?.message?.content}`));
    if (!check(status === 200, `${what}: HTTP ${status} ${JSON.stringify(json?.error ?? "")}`)) return null;
    if (Array.isArray(calls) && calls.length > 0) {
        const c = calls[0];
        let args = null;
        try { args = JSON.parse(c.function?.arguments); } catch { /* reported below */ }
        check(choice.finish_reason === "tool_calls", `${what}: finish_reason is tool_calls`);
        check(typeof c.id === "string" && c.id !== "" && c.type === "function", `${what}: the call has an id and type function`);
        check(c.function?.name === "hr_lookup_employee", `${what}: calls hr_lookup_employee`);
        check(args !== null && typeof args.employee_id === "string", `${what}: arguments parse and have employee_id: ${c.function?.arguments}`);
        return c;
    }
    let answer = null;
    try { answer = JSON.parse(choice?.message?.content); } catch { /* reported below */ }
    check(answer !== null && typeof answer.department === "string" && typeof answer.manager === "string",
        `${what}: the final answer parses and has department and manager`);
    return null;
}

const first = await post({model, messages: taskMessages, tools, response_format: taskFormat, temperature: 0, max_tokens: 200});
const call = checkToolReply("tools, first turn", first);
if (call) {
    const second = await post({
        model, tools, response_format: taskFormat, temperature: 0, max_tokens: 200,
        messages: [...taskMessages, {role: "assistant", content: null, tool_calls: [call]},
            {role: "tool", tool_call_id: call.id, content: JSON.stringify(employee)}]
    });
    const again = checkToolReply("tools, after the result", second);
    if (!again) {
        const answer = JSON.parse(second.json.choices[0].message.content);
        console.log(`tools: final answer ${answer.department === "Finance" && answer.manager === "Grace" ? "uses" : "does not use"} the tool result`);
    }
} else {
    console.log("tools: the model answered without calling the tool");
}
const forced = await post({model, messages: taskMessages, tools, tool_choice: {type: "function", function: {name: "hr_lookup_employee"}},
    temperature: 0, max_tokens: 100});
check(checkToolReply("tools, tool_choice names the function", forced) !== null, "a named tool_choice gives a tool call");
const none = await post({model, messages: taskMessages, tools, tool_choice: "none", response_format: taskFormat, temperature: 0, max_tokens: 200});
check(checkToolReply("tools, tool_choice none", none) === null, "tool_choice none gives no tool call");

// Requests that must be refused with 400, not crash the server.
const bad = {
    "malformed JSON": "{not json",
    "no messages": {model, messages: []},
    "unknown role": {model, messages: [{role: "robot", content: "hi"}]},
    "unknown response_format type": {model, messages, response_format: {type: "xml"}},
    "schema without grammar": {model, messages, response_format: {type: "json_schema", json_schema: {schema: {allOf: [{type: "string"}]}}}},
    "negative max_tokens": {model, messages, max_tokens: -1},
    "tools not an array": {model, messages, tools: {type: "function"}},
    "tool without a name": {model, messages, tools: [{type: "function", function: {parameters: {type: "object"}}}]},
    "tool with a dotted name": {model, messages, tools: [{type: "function", function: {name: "hr.lookup"}}]},
    "tool schema without grammar": {model, messages, tools: [{type: "function", function: {name: "f", parameters: {type: "object", properties: {a: {not: {type: "string"}}}}}}]},
    "tool_choice names an unknown function": {model, messages, tools, tool_choice: {type: "function", function: {name: "nope"}}}
};
for (const [what, body] of Object.entries(bad)) {
    const {status, json} = await post(body);
    check(status === 400 && typeof json?.error?.message === "string", `${what}: expected a 400 JSON error, got ${status} ${JSON.stringify(json)}`);
    if (what === "schema without grammar")
        check(/response_format/.test(json?.error?.message ?? ""), `${what}: message mentions response_format`);
    if (what.startsWith("tool"))
        check(/^tool/.test(json?.error?.message ?? ""), `${what}: message starts with tools: or tool_choice: (${json?.error?.message})`);
}
const after = await fetch(`${base}/models`);
check(after.status === 200, "server still answers after the bad requests");

console.log(failures === 0 ? "smoke: ok" : `smoke: ${failures} check(s) failed`);
process.exit(failures === 0 ? 0 : 1);
