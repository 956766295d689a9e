// A minimal OpenAI-compatible chat-completions server over node-llama-cpp, for cuga-flo's tests.
//
//   MODEL=/path/model.gguf [PORT=0] [THREADS=1] [CTX=2048] node oai-server.mjs
//
// Serves GET /v1/models and POST /v1/chat/completions (no streaming) on 127.0.0.1 only. Requests
// run one at a time. When the model is loaded it prints exactly one line on stdout,
// `listening http://127.0.0.1:PORT/v1`; everything else goes to stderr.
//
// Deliberate differences from OpenAI: temperature defaults to 0 (greedy, so tests are
// reproducible) and max_tokens defaults to 256. A trailing assistant message is continued rather
// than answered. `logprobs` and similar fields are accepted and ignored.
//
// Tool calling (`tools`, `tool_choice`, `parallel_tool_calls`): the model has no native tool
// template, so the tools are described in the system message and the reply is constrained by a
// grammar to one JSON object, either {"action": "call_tool", "tool": <name>, "arguments": {…}} or
// {"action": "final", "answer": <answer>}; the server turns the first into `tool_calls` and the
// second into `content`. At most one tool call per reply. See tests/llm/README.md.
import http from "node:http";
import path from "node:path";
import {createHash, randomUUID} from "node:crypto";
import {getLlama, LlamaChat, LlamaLogLevel} from "node-llama-cpp";

const env = process.env;
const modelPath = env.MODEL ?? process.argv[2];
const port = intEnv("PORT", 0);
const threads = intEnv("THREADS", 1);
const contextSize = intEnv("CTX", 2048);
const modelId = env.MODEL_ID || (modelPath ? path.basename(modelPath).replace(/\.gguf$/i, "") : "local");
// By default every request starts from an empty context, so an answer never depends on the
// request before it. REUSE_PREFIX=1 keeps the evaluated tokens and re-evaluates only from the first
// token that differs (faster when requests share a long system prompt).
const reusePrefix = env.REUSE_PREFIX === "1";
// LOG_PROMPTS=1 writes every templated prompt to the log (to see how tools and results are shown).
const logPrompts = env.LOG_PROMPTS === "1";
const defaultMaxTokens = 256;
const maxBodyBytes = 4 * 1024 * 1024;

function log(...args) {
    console.error(`[oai-server ${new Date().toISOString()}]`, ...args);
}

function intEnv(name, fallback) {
    const raw = env[name];
    if (raw == null || raw === "") return fallback;
    const n = Number(raw);
    if (!Number.isInteger(n) || n < 0) {
        console.error(`oai-server: ${name} must be a non-negative integer, got ${JSON.stringify(raw)}`);
        process.exit(2);
    }
    return n;
}

if (!modelPath) {
    console.error("oai-server: set MODEL=/path/to/model.gguf (or pass the path as the first argument)");
    process.exit(2);
}

// ---------------------------------------------------------------------------------------------
// Errors that become an HTTP response.

class HttpError extends Error {
    constructor(status, message, {param = null, type, code = null} = {}) {
        super(message);
        this.status = status;
        this.param = param;
        this.type = type ?? (status >= 500 ? "server_error" : "invalid_request_error");
        this.code = code;
    }
}

const badRequest = (message, param = null, code = null) => new HttpError(400, message, {param, code});

// ---------------------------------------------------------------------------------------------
// JSON schema → a schema node-llama-cpp's grammar generator handles faithfully.
//
// The generator never rejects a schema: constructs it does not know (anyOf, a schema without a
// type, `{"type":"object"}` without properties, …) silently become a grammar for `null` or `{}`.
// So the schema is rewritten first where a faithful equivalent exists, and refused with a 400
// where none does.

const ANY_JSON = Object.freeze({
    oneOf: [
        {type: ["string", "number", "boolean", "null"]},
        {type: "object", additionalProperties: true},
        {type: "array"}
    ]
});
const PRIMITIVE_TYPES = new Set(["string", "number", "integer", "boolean", "null"]);
const REFUSED_KEYWORDS = ["allOf", "not", "if", "then", "else", "patternProperties", "propertyNames",
    "dependentSchemas", "unevaluatedProperties", "unevaluatedItems", "contains", "$dynamicRef"];
const STRING_FORMATS = new Set(["date", "time", "date-time"]);
const ANNOTATIONS = new Set(["title", "description", "default", "examples", "$comment", "$schema", "$id",
    "deprecated", "readOnly", "writeOnly", "strict"]);

// Keywords the grammar cannot enforce; they are dropped and reported in the server log.
const IGNORED_KEYWORDS = ["pattern", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf",
    "uniqueItems", "contentEncoding", "contentMediaType"];
let ignoredInSchema = new Set();

class SchemaError extends Error {
    constructor(where, message) {
        super(`${where}: ${message}`);
    }
}

function prepareSchema(root) {
    if (root === null || typeof root !== "object" || Array.isArray(root))
        throw new SchemaError("schema", "must be a JSON object");
    ignoredInSchema = new Set();
    const rawDefs = {...(root.definitions ?? {}), ...(root.$defs ?? {})};
    const defs = {};
    for (const [name, def] of Object.entries(rawDefs))
        defs[name] = normalise(def, `$defs.${name}`, rawDefs);
    const out = normalise(root, "schema", rawDefs);
    if (Object.keys(defs).length > 0) {
        // Keep the definitions next to the root, whatever the root became.
        return out.oneOf && Object.keys(out).length === 1
            ? {oneOf: out.oneOf, $defs: defs}
            : {...out, $defs: defs};
    }
    return out;
}

function normalise(s, where, defs) {
    if (s === true) return ANY_JSON;
    if (s === false) throw new SchemaError(where, "`false` accepts nothing");
    if (s === null || typeof s !== "object" || Array.isArray(s))
        throw new SchemaError(where, "must be a JSON object");
    for (const keyword of REFUSED_KEYWORDS)
        if (s[keyword] !== undefined) throw new SchemaError(where, `keyword \`${keyword}\` is not supported`);
    for (const keyword of IGNORED_KEYWORDS) if (s[keyword] !== undefined) ignoredInSchema.add(keyword);

    if (s.$ref !== undefined) {
        const m = typeof s.$ref === "string" && /^#\/(?:\$defs|definitions)\/(.+)$/.exec(s.$ref);
        if (!m || !(m[1] in defs))
            throw new SchemaError(where, `only references to the root's $defs/definitions are supported, got ${JSON.stringify(s.$ref)}`);
        return {$ref: `#/$defs/${m[1]}`};
    }
    if (s.const !== undefined) return {const: literal(s.const, `${where}.const`)};
    if (s.enum !== undefined) {
        if (!Array.isArray(s.enum) || s.enum.length === 0)
            throw new SchemaError(where, "`enum` must be a non-empty array");
        return {enum: s.enum.map((v, i) => literal(v, `${where}.enum[${i}]`))};
    }
    const alternatives = s.oneOf ?? s.anyOf;
    if (alternatives !== undefined) {
        const key = s.oneOf !== undefined ? "oneOf" : "anyOf";
        if (!Array.isArray(alternatives) || alternatives.length === 0)
            throw new SchemaError(where, `\`${key}\` must be a non-empty array`);
        return {oneOf: alternatives.map((alt, i) => normalise(alt, `${where}.${key}[${i}]`, defs))};
    }

    let type = s.type;
    if (type === undefined) {
        if (s.properties !== undefined || s.additionalProperties !== undefined || s.required !== undefined) type = "object";
        else if (s.items !== undefined || s.prefixItems !== undefined) type = "array";
        else if (Object.keys(s).every((k) => ANNOTATIONS.has(k))) return ANY_JSON;
        else throw new SchemaError(where, "has no `type`, `enum`, `const`, `oneOf`, `anyOf` or `$ref`");
    }
    if (Array.isArray(type)) {
        if (type.length === 0) throw new SchemaError(where, "`type` must not be an empty array");
        // A plain list of primitive types stays one grammar rule, unless a length limit
        // must survive (it applies to the string branch only).
        const limited = s.minLength !== undefined || s.maxLength !== undefined;
        if (type.every((t) => PRIMITIVE_TYPES.has(t)) && !limited) return {type: [...type]};
        return {oneOf: type.map((t) => normalise({...s, type: t}, `${where}(type ${t})`, defs))};
    }
    switch (type) {
        case "object": {
            if (s.properties !== undefined && (typeof s.properties !== "object" || s.properties === null || Array.isArray(s.properties)))
                throw new SchemaError(where, "`properties` must be an object");
            const properties = {};
            for (const [key, value] of Object.entries(s.properties ?? {}))
                properties[key] = normalise(value, `${where}.properties.${key}`, defs);
            const out = {type: "object", properties};
            const extra = s.additionalProperties;
            if (extra === undefined) {
                // JSON Schema allows extra keys by default. With declared properties, emitting only
                // those is valid output; without any, the generator would only ever write `{}`.
                if (Object.keys(properties).length === 0) out.additionalProperties = true;
            } else if (extra === true || extra === false) {
                out.additionalProperties = extra;
            } else {
                out.additionalProperties = normalise(extra, `${where}.additionalProperties`, defs);
            }
            for (const k of ["minProperties", "maxProperties"]) if (s[k] !== undefined) out[k] = s[k];
            return out;
        }
        case "array": {
            const out = {type: "array"};
            if (s.items !== undefined && s.items !== true) {
                if (s.items === false && s.prefixItems === undefined) throw new SchemaError(where, "`items: false` is not supported");
                if (s.items !== false) out.items = normalise(s.items, `${where}.items`, defs);
            }
            if (s.prefixItems !== undefined) {
                if (!Array.isArray(s.prefixItems)) throw new SchemaError(where, "`prefixItems` must be an array");
                out.prefixItems = s.prefixItems.map((item, i) => normalise(item, `${where}.prefixItems[${i}]`, defs));
                if (s.items === false) out.maxItems = s.prefixItems.length;
            }
            for (const k of ["minItems", "maxItems"]) if (s[k] !== undefined) out[k] = s[k];
            return out;
        }
        case "string": {
            const out = {type: "string"};
            // Formats other than these are annotations as far as the grammar is concerned.
            if (s.format !== undefined && !STRING_FORMATS.has(s.format)) ignoredInSchema.add(`format ${s.format}`);
            if (STRING_FORMATS.has(s.format)) out.format = s.format;
            else for (const k of ["minLength", "maxLength"]) if (s[k] !== undefined) out[k] = s[k];
            return out;
        }
        case "number":
        case "integer":
        case "boolean":
        case "null":
            return {type};
        default:
            throw new SchemaError(where, `unknown type ${JSON.stringify(type)}`);
    }
}

function literal(value, where) {
    if (value === null || ["string", "number", "boolean"].includes(typeof value)) return value;
    throw new SchemaError(where, "only string, number, boolean or null values are supported");
}

// ---------------------------------------------------------------------------------------------
// Tools: validation, and the JSON shapes the model writes.

const TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;
const CALL_TOOL = "call_tool";
const FINAL = "final";
const AFTER_RESULTS = "Now give the final answer, unless you still need other information from a tool.";

// `tools`, `tool_choice` and `parallel_tool_calls` → {tools: [{name, description, parameters,
// schema}], choice: "auto" | "none" | "required" | {name}, active}. `active` is true when the
// reply may (or must) be a tool call.
function parseTools(body) {
    const raw = body.tools;
    const tools = [];
    if (raw != null) {
        if (!Array.isArray(raw)) throw badRequest("tools: must be an array of {type: \"function\", function: {…}} objects", "tools");
        const seen = new Set();
        raw.forEach((t, i) => {
            const where = `tools[${i}]`;
            if (t === null || typeof t !== "object" || Array.isArray(t))
                throw badRequest(`tools: ${where} must be an object`, "tools");
            if (t.type !== "function")
                throw badRequest(`tools: ${where}.type must be "function", got ${JSON.stringify(t.type)}`, "tools");
            const f = t.function;
            if (f === null || typeof f !== "object" || Array.isArray(f))
                throw badRequest(`tools: ${where}.function must be an object`, "tools");
            if (typeof f.name !== "string" || !TOOL_NAME.test(f.name))
                throw badRequest(`tools: ${where}.function.name must be 1 to 64 letters, digits, _ or -, got ${JSON.stringify(f.name)}`, "tools");
            if (seen.has(f.name)) throw badRequest(`tools: ${where}: the name ${JSON.stringify(f.name)} is used twice`, "tools");
            seen.add(f.name);
            if (f.description != null && typeof f.description !== "string")
                throw badRequest(`tools: ${where}.function.description must be a string`, "tools");
            // OpenAI: omitted parameters mean a function without arguments.
            const parameters = f.parameters ?? {type: "object", properties: {}, additionalProperties: false};
            let schema;
            try {
                schema = prepareSchema(parameters);
            } catch (e) {
                if (e instanceof SchemaError) {
                    const at = `${where}.function.parameters`;
                    const message = e.message.startsWith("schema") ? at + e.message.slice("schema".length) : `${at}.${e.message}`;
                    throw badRequest(`tools: ${message}`, "tools");
                }
                throw e;
            }
            if (schema.type !== "object")
                throw badRequest(`tools: ${where}.function.parameters must describe an object (\`"type": "object"\`)`, "tools");
            if (ignoredInSchema.size > 0)
                log(`tools: the grammar does not enforce ${[...ignoredInSchema].join(", ")} in the parameters of ${f.name}`);
            tools.push({name: f.name, description: f.description ?? "", parameters, schema});
        });
    }

    let choice = body.tool_choice ?? "auto";
    if (typeof choice === "string") {
        if (!["auto", "none", "required"].includes(choice))
            throw badRequest(`tool_choice: must be "auto", "none", "required" or {"type": "function", "function": {"name": …}}; got ${JSON.stringify(choice)}`, "tool_choice");
    } else if (choice !== null && typeof choice === "object" && !Array.isArray(choice) && choice.type === "function" &&
        typeof choice.function?.name === "string") {
        if (!tools.some((t) => t.name === choice.function.name))
            throw badRequest(`tool_choice: names the function ${JSON.stringify(choice.function.name)}, which is not in \`tools\``, "tool_choice");
        choice = {name: choice.function.name};
    } else {
        throw badRequest("tool_choice: must be \"auto\", \"none\", \"required\" or {\"type\": \"function\", \"function\": {\"name\": …}}", "tool_choice");
    }
    if (tools.length === 0 && choice !== "auto" && choice !== "none")
        throw badRequest("tool_choice: asks for a tool call but `tools` is empty or missing", "tool_choice");
    if (body.parallel_tool_calls != null && typeof body.parallel_tool_calls !== "boolean")
        throw badRequest("parallel_tool_calls: must be a boolean", "parallel_tool_calls");
    const offered = typeof choice === "object" ? tools.filter((t) => t.name === choice.name) : tools;
    return {tools, offered, choice, active: tools.length > 0 && choice !== "none"};
}

// JSON on one line with a space after `:` and `,`, the way the model writes it.
function inlineJson(value) {
    if (Array.isArray(value)) return `[${value.map(inlineJson).join(", ")}]`;
    if (value !== null && typeof value === "object")
        return `{${Object.entries(value).map(([k, v]) => `${JSON.stringify(k)}: ${inlineJson(v)}`).join(", ")}}`;
    return JSON.stringify(value) ?? "null";
}

// The tool call as the model writes it (and as earlier calls are shown to it).
function toolCallText(name, args) {
    return inlineJson({action: CALL_TOOL, tool: name, arguments: args});
}

// A call's `arguments` string as a JSON value for the prompt (a string when it does not parse).
function argumentsValue(args) {
    if (typeof args !== "string") return args ?? {};
    try { return JSON.parse(args); } catch { return args; }
}

// The section appended to the system message when the reply may be a tool call.
function toolsSection(tooling, answer) {
    const lines = ["## Tools", "",
        "You can call these tools. Each takes its arguments as one JSON object matching its parameters.", ""];
    for (const t of tooling.tools) {
        lines.push(`- ${t.name}: ${t.description || "(no description)"}`);
        lines.push(`  parameters: ${JSON.stringify(t.parameters)}`);
    }
    const answerShape = {text: "\"<your answer as text>\"", json: "{<your answer as a JSON object>}",
        schema: "<your answer: JSON matching the answer schema below>"}[answer.kind];
    const callShape = `{"action": "${CALL_TOOL}", "tool": "<tool name>", "arguments": {<the tool's arguments>}}`;
    lines.push("", "## How to reply", "");
    if (tooling.choice === "auto") {
        lines.push("Reply with exactly one JSON object, in one of two forms:",
            `- to call a tool: ${callShape}`,
            `- to give your final answer: {"action": "${FINAL}", "answer": ${answerShape}}`,
            "",
            "Call a tool when you still need information it can give; never invent data a tool can look up.",
            "Each tool result comes back to you in the next message. Once you have what you need, give the final answer.");
        if (answer.kind === "schema") lines.push("", `Answer schema: ${JSON.stringify(answer.schema)}`);
    } else {
        const which = typeof tooling.choice === "object" ? `the tool ${tooling.choice.name}` : "one of the tools";
        lines.push(`Call ${which} now. Reply with exactly one JSON object: ${callShape}`);
    }
    return lines.join("\n");
}

// ---------------------------------------------------------------------------------------------
// Request → chat history and generation options.

function textOf(content, where) {
    if (content == null) return "";
    if (typeof content === "string") return content;
    if (Array.isArray(content)) {
        return content.map((part, i) => {
            if (typeof part === "string") return part;
            if (part && part.type === "text" && typeof part.text === "string") return part.text;
            throw badRequest(`${where}[${i}]: only text content parts are supported`, where);
        }).join("");
    }
    throw badRequest(`${where} must be a string or an array of text parts`, where);
}

// `tooling` is parseTools()'s result, `answer` parseResponseFormat()'s.
function buildHistory(messages, tooling, answer) {
    if (!Array.isArray(messages) || messages.length === 0)
        throw badRequest("`messages` must be a non-empty array", "messages");
    const systemTexts = [];
    const turns = []; // {type: "user", text} | {type: "model", response: [text]}
    const push = (type, text) => {
        const last = turns[turns.length - 1];
        // Chat templates expect alternating turns: merge neighbours of the same kind.
        if (last && last.type === type) {
            if (type === "user") last.text += `\n\n${text}`;
            else last.response[0] += `\n\n${text}`;
        } else {
            turns.push(type === "user" ? {type, text} : {type, response: [text]});
        }
    };
    const toolNames = new Map(); // tool_call_id → function name, for the results
    messages.forEach((m, i) => {
        const where = `messages[${i}]`;
        if (m === null || typeof m !== "object") throw badRequest(`${where} must be an object`, where);
        const text = textOf(m.content, `${where}.content`);
        switch (m.role) {
            case "system":
            case "developer":
                systemTexts.push(text);
                break;
            case "user":
                push("user", text);
                break;
            case "assistant": {
                const calls = m.tool_calls ?? [];
                if (!Array.isArray(calls)) throw badRequest(`${where}.tool_calls must be an array`, `${where}.tool_calls`);
                const said = [];
                if (text !== "") {
                    // With tools on, earlier answers are shown in the form the model must use.
                    said.push(tooling.active && calls.length === 0 ? finalAnswerText(text, answer) : text);
                }
                calls.forEach((c, j) => {
                    const name = c?.function?.name;
                    if (typeof name !== "string" || name === "")
                        throw badRequest(`${where}.tool_calls[${j}].function.name must be a non-empty string`, `${where}.tool_calls`);
                    if (typeof c.id === "string") toolNames.set(c.id, name);
                    // Exactly what the model writes when it calls a tool.
                    said.push(toolCallText(name, argumentsValue(c.function.arguments)));
                });
                if (said.length > 0) push("model", said.join("\n"));
                break;
            }
            case "tool":
            case "function": {
                const id = typeof m.tool_call_id === "string" ? m.tool_call_id : null;
                const name = m.name ?? (id != null ? toolNames.get(id) : undefined) ?? "a tool";
                // The call id is left out: ids are opaque, and any text in the prompt changes what
                // a greedy model writes.
                push("user", `Result of ${name}: ${text}`);
                break;
            }
            default:
                throw badRequest(`${where}.role must be one of system, developer, user, assistant, tool; got ${JSON.stringify(m.role)}`, `${where}.role`);
        }
    });
    if (tooling.active) systemTexts.push(toolsSection(tooling, answer));
    // After tool results, say what comes next: without this line small models tend to repeat the
    // call they see just above instead of using its result.
    const lastRole = messages[messages.length - 1].role;
    if (tooling.active && tooling.choice === "auto" && (lastRole === "tool" || lastRole === "function"))
        push("user", AFTER_RESULTS);
    const history = [];
    if (systemTexts.length > 0) history.push({type: "system", text: systemTexts.join("\n\n")});
    history.push(...turns);
    // The model answers in the last item: a fresh empty response, or the trailing assistant
    // message, which it continues.
    if (turns.length === 0 || turns[turns.length - 1].type !== "model") history.push({type: "model", response: []});
    return history;
}

// An earlier plain answer, shown as the final-answer object the model writes with tools on.
function finalAnswerText(text, answer) {
    let value = text;
    if (answer.kind !== "text") {
        try { value = JSON.parse(text); } catch { /* kept as a string */ }
    }
    return inlineJson({action: FINAL, answer: value});
}

function numberParam(body, name, {min, max, integer = false} = {}) {
    const v = body[name];
    if (v == null) return undefined;
    if (typeof v !== "number" || !Number.isFinite(v) || (integer && !Number.isInteger(v)) ||
        (min != null && v < min) || (max != null && v > max)) {
        const range = [min != null ? `>= ${min}` : null, max != null ? `<= ${max}` : null].filter(Boolean).join(" and ");
        throw badRequest(`\`${name}\` must be ${integer ? "an integer" : "a number"}${range ? ` ${range}` : ""}`, name);
    }
    return v;
}

// `response_format` → {kind: "text"} | {kind: "json"} (any JSON value) | {kind: "schema", schema}
// (the schema as sent).
function parseResponseFormat(responseFormat) {
    if (responseFormat == null) return {kind: "text"};
    if (typeof responseFormat !== "object" || Array.isArray(responseFormat))
        throw badRequest("`response_format` must be an object", "response_format");
    let schema;
    switch (responseFormat.type) {
        case undefined:
        case "text":
            return {kind: "text"};
        case "json_schema":
            schema = responseFormat.json_schema?.schema;
            if (schema == null)
                throw badRequest("`response_format.json_schema.schema` is required for type json_schema", "response_format");
            return {kind: "schema", schema};
        case "json_object":
            schema = responseFormat.schema ?? responseFormat.json_schema?.schema;
            return schema == null ? {kind: "json"} : {kind: "schema", schema};
        default:
            throw badRequest(`\`response_format.type\` must be text, json_object or json_schema; got ${JSON.stringify(responseFormat.type)}`, "response_format");
    }
}

// The answer's schema, normalised (null for free text).
function answerSchema(answer) {
    switch (answer.kind) {
        case "text": return null;
        case "json": return {type: "object", additionalProperties: true}; // OpenAI's JSON mode: an object
        default:
            try {
                const schema = prepareSchema(answer.schema);
                if (ignoredInSchema.size > 0)
                    log(`response_format: the grammar does not enforce ${[...ignoredInSchema].join(", ")}`);
                return schema;
            } catch (e) {
                if (e instanceof SchemaError)
                    throw badRequest(`response_format: cannot turn this JSON schema into a grammar: ${e.message}`, "response_format");
                throw e;
            }
    }
}

// The schema of a reply when tools are on: a tool call (one alternative per offered tool, so the
// arguments follow that tool's parameters) or, with tool_choice "auto", the final answer.
function toolReplySchema(tooling, answer) {
    const calls = tooling.offered.map((t) => ({
        type: "object",
        properties: {action: {const: CALL_TOOL}, tool: {const: t.name}, arguments: t.schema},
        additionalProperties: false
    }));
    if (tooling.choice !== "auto") return calls.length === 1 ? calls[0] : {oneOf: calls};
    const final = {
        type: "object",
        properties: {action: {const: FINAL}, answer: answerSchema(answer) ?? {type: "string"}},
        additionalProperties: false
    };
    return {oneOf: [...calls, final]};
}

const grammarCache = new Map();

// The grammar for the reply, or undefined for free text.
async function grammarFor(llama, tooling, answer) {
    let schema;
    if (tooling.active) schema = toolReplySchema(tooling, answer);
    else if (answer.kind === "json") schema = "json";
    else schema = answerSchema(answer);
    if (schema == null) return undefined;
    const key = (tooling.active ? "one line: " : "") + (typeof schema === "string" ? schema : JSON.stringify(schema));
    if (grammarCache.has(key)) return grammarCache.get(key);
    let grammar;
    try {
        grammar = schema === "json"
            ? await llama.getGrammarFor("json")
            : await llama.createGrammarForJsonSchema(schema);
        if (tooling.active) grammar = await oneLineGrammar(llama, grammar);
    } catch (e) {
        const what = tooling.active ? "tools" : "response_format";
        throw badRequest(`${what}: cannot turn this JSON schema into a grammar: ${e.message}`, what);
    }
    if (grammarCache.size > 64) grammarCache.clear();
    grammarCache.set(key, grammar);
    return grammar;
}

// The same grammar without line breaks and indentation between JSON tokens. node-llama-cpp's JSON
// grammars allow them, and SmolLM2-135M, once it has started a newline-and-indent layout inside a
// tool call, tends to repeat a string's content until max_tokens ("E101,E101,E101,…"); kept on one
// line it copies the arguments cleanly. Only the whitespace rules change, so the language is the
// same up to whitespace.
async function oneLineGrammar(llama, jsonGrammar) {
    const text = jsonGrammar.grammar.replace(/^((comma-)?whitespace-[\w-]*) ::= .*$/gm,
        (_, name, comma) => `${name} ::= ${comma ? '"," ' : ""}[ ]?`);
    return await llama.createGrammar({grammar: text, stopGenerationTriggers: ["\n".repeat(4)], trimWhitespaceSuffix: true});
}

// The model's reply with tools on → {toolCall: {name, arguments}} or {content}. A reply cut off
// by max_tokens is returned as it is, in `content`.
function readToolReply(text, answer) {
    let reply;
    try { reply = JSON.parse(text); } catch { /* cut off */ }
    if (reply?.action === CALL_TOOL && typeof reply.tool === "string")
        return {toolCall: {name: reply.tool, arguments: JSON.stringify(reply.arguments ?? {})}};
    if (reply?.action === FINAL) {
        if (answer.kind === "text") return {content: String(reply.answer)};
        // The answer exactly as the model wrote it (key order, number formatting).
        const m = /^\s*\{\s*"action"\s*:\s*"final"\s*,\s*"answer"\s*:\s*([\s\S]*?)\s*\}\s*$/.exec(text);
        return {content: m ? m[1] : JSON.stringify(reply.answer)};
    }
    // Cut off: give the partial answer when the model was writing one, else everything.
    const partial = /^\s*\{\s*"action"\s*:\s*"final"\s*,\s*"answer"\s*:\s*([\s\S]*)$/.exec(text);
    return {content: partial ? partial[1] : text};
}

// ---------------------------------------------------------------------------------------------
// The model.

log(`loading ${modelPath} (node ${process.version}, pid ${process.pid})`);
const llama = await getLlama({gpu: false, build: "never", logLevel: LlamaLogLevel.warn, progressLogs: false});
const loadStart = Date.now();
const model = await llama.loadModel({modelPath});
const context = await model.createContext({contextSize, threads, sequences: 1});
const sequence = context.getSequence();
const chat = new LlamaChat({contextSequence: sequence, autoDisposeSequence: false});
log(`loaded ${modelPath} in ${Date.now() - loadStart} ms (context ${context.contextSize}, ${threads} thread(s), chat wrapper ${chat.chatWrapper.wrapperName})`);

async function complete(body, signal) {
    if (body === null || typeof body !== "object" || Array.isArray(body))
        throw badRequest("the request body must be a JSON object");
    if (body.stream === true) throw badRequest("`stream: true` is not supported by this test server", "stream");
    if (body.n != null && body.n !== 1) throw badRequest("only `n: 1` is supported", "n");

    const tooling = parseTools(body);
    const answer = parseResponseFormat(body.response_format);
    const history = buildHistory(body.messages, tooling, answer);
    const temperature = numberParam(body, "temperature", {min: 0, max: 2}) ?? 0;
    const topP = numberParam(body, "top_p", {min: 0, max: 1});
    const seed = numberParam(body, "seed", {integer: true});
    const maxTokens = numberParam(body, "max_completion_tokens", {min: 1, integer: true}) ??
        numberParam(body, "max_tokens", {min: 1, integer: true}) ?? defaultMaxTokens;
    let stop = body.stop;
    if (stop != null) {
        if (typeof stop === "string") stop = [stop];
        if (!Array.isArray(stop) || stop.some((s) => typeof s !== "string" || s === ""))
            throw badRequest("`stop` must be a string or an array of non-empty strings", "stop");
    }
    const grammar = await grammarFor(llama, tooling, answer);

    const {contextText} = chat.chatWrapper.generateContextState({chatHistory: history});
    if (logPrompts) log(`prompt:\n${contextText.toString()}`);
    const promptTokens = contextText.tokenize(model.tokenizer).length;
    const room = context.contextSize - promptTokens;
    if (room < 1) {
        throw badRequest(`This model's maximum context length is ${context.contextSize} tokens; the messages take ${promptTokens}.`,
            "messages", "context_length_exceeded");
    }

    if (!reusePrefix) await sequence.clearHistory();
    let completionTokens = 0;
    const result = await chat.generateResponse(history, {
        grammar,
        temperature,
        topP,
        seed,
        maxTokens: Math.min(maxTokens, room),
        customStopTriggers: stop ?? undefined,
        signal,
        stopOnAbortSignal: true,
        onToken: (tokens) => { completionTokens += tokens.length; }
    });
    const stopReason = result.metadata?.stopReason;
    let message = {role: "assistant", content: result.response, refusal: null};
    let finishReason = stopReason === "maxTokens" ? "length" : "stop";
    if (tooling.active) {
        const reply = readToolReply(result.response, answer);
        if (reply.toolCall) {
            // Derived from the prompt and the reply, so a repeated conversation repeats exactly.
            const id = `call_${createHash("sha256").update(contextText.toString()).update(result.response).digest("hex").slice(0, 24)}`;
            message = {role: "assistant", content: null, refusal: null,
                tool_calls: [{id, type: "function", function: reply.toolCall}]};
            finishReason = "tool_calls";
        } else {
            message.content = reply.content;
        }
    }
    return {
        id: `chatcmpl-${randomUUID()}`,
        object: "chat.completion",
        created: Math.floor(Date.now() / 1000),
        model: typeof body.model === "string" && body.model !== "" ? body.model : modelId,
        system_fingerprint: `node-llama-cpp-${modelId}`,
        choices: [{
            index: 0,
            message,
            logprobs: null,
            finish_reason: finishReason
        }],
        usage: {
            prompt_tokens: promptTokens,
            completion_tokens: completionTokens,
            total_tokens: promptTokens + completionTokens
        }
    };
}

// ---------------------------------------------------------------------------------------------
// HTTP.

function send(res, status, payload) {
    if (res.writableEnded || res.destroyed) return;
    const data = JSON.stringify(payload);
    res.writeHead(status, {"content-type": "application/json", "content-length": Buffer.byteLength(data)});
    res.end(data);
}

function sendError(res, e) {
    const err = e instanceof HttpError ? e : new HttpError(500, `internal error: ${e?.message ?? e}`);
    if (!(e instanceof HttpError)) log("request failed:", e?.stack ?? e);
    send(res, err.status, {error: {message: err.message, type: err.type, param: err.param, code: err.code}});
}

function readBody(req) {
    return new Promise((resolve, reject) => {
        const chunks = [];
        let size = 0;
        req.on("data", (chunk) => {
            size += chunk.length;
            if (size > maxBodyBytes) {
                reject(new HttpError(413, `request body larger than ${maxBodyBytes} bytes`));
                req.destroy();
                return;
            }
            chunks.push(chunk);
        });
        req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
        req.on("error", reject);
    });
}

let queue = Promise.resolve(); // one generation at a time

async function handleCompletion(req, res) {
    const raw = await readBody(req);
    let body;
    try {
        body = JSON.parse(raw);
    } catch (e) {
        throw badRequest(`the request body is not valid JSON: ${e.message}`);
    }
    const abort = new AbortController();
    res.on("close", () => { if (!res.writableFinished) abort.abort(); });
    const run = queue.then(async () => {
        if (abort.signal.aborted) return null; // the client gave up while queued
        const started = Date.now();
        const out = await complete(body, abort.signal);
        const call = out.choices[0].message.tool_calls?.[0]?.function;
        const ending = abort.signal.aborted ? "client went away"
            : call ? `tool_calls ${call.name}(${call.arguments})` : out.choices[0].finish_reason;
        log(`chat.completion ${Date.now() - started} ms, ${out.usage.prompt_tokens}+${out.usage.completion_tokens} tokens, ${ending}`);
        return out;
    });
    queue = run.catch(() => {});
    const out = await run;
    if (out != null) send(res, 200, out);
}

const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    const route = url.pathname.replace(/\/+$/, "");
    const handle = async () => {
        if (route === "/v1/models" || route === `/v1/models/${encodeURIComponent(modelId)}`) {
            if (req.method !== "GET") throw new HttpError(405, `use GET for ${route}`);
            const entry = {id: modelId, object: "model", created: Math.floor(loadStart / 1000), owned_by: "local"};
            return send(res, 200, route === "/v1/models" ? {object: "list", data: [entry]} : entry);
        }
        if (route === "/v1/chat/completions") {
            if (req.method !== "POST") throw new HttpError(405, "use POST for /v1/chat/completions");
            return await handleCompletion(req, res);
        }
        throw new HttpError(404, `no route for ${req.method} ${url.pathname}`, {code: "not_found"});
    };
    handle().catch((e) => sendError(res, e));
});

process.on("unhandledRejection", (e) => log("unhandled rejection:", e?.stack ?? e));
for (const signal of ["SIGINT", "SIGTERM"]) {
    process.once(signal, () => {
        log(`${signal}: shutting down`);
        server.close();
        setTimeout(() => process.exit(0), 2000).unref();
        llama.dispose().finally(() => process.exit(0));
    });
}

server.listen(port, "127.0.0.1", () => {
    console.log(`listening http://127.0.0.1:${server.address().port}/v1`);
});
