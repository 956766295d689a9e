// A minimal OpenAI-compatible chat-completions server over node-llama-cpp, for cuga-flo's tests.
//
//   MODEL=/path/model.gguf [PORT=0] [THREADS=1] [CTX=2048] node oai-server.mjs
//
// Serves GET /v1/models and POST /v1/chat/completions (no streaming, no tool calls) on
// 127.0.0.1 only. Requests run one at a time. When the model is loaded it prints exactly one line
// on stdout, `listening http://127.0.0.1:PORT/v1`; everything else goes to stderr.
//
// Deliberate differences from OpenAI: temperature defaults to 0 (greedy, so tests are
// reproducible) and max_tokens defaults to 256. A trailing assistant message is continued rather
// than answered. `tools`, `tool_choice`, `logprobs` and similar fields are accepted and ignored.
import http from "node:http";
import path from "node:path";
import {randomUUID} from "node:crypto";
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

function buildHistory(messages) {
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
                let said = text;
                if (Array.isArray(m.tool_calls) && m.tool_calls.length > 0) {
                    const calls = m.tool_calls.map((c) => JSON.stringify({name: c?.function?.name, arguments: c?.function?.arguments}));
                    said = [said, ...calls.map((c) => `Tool call: ${c}`)].filter(Boolean).join("\n");
                }
                push("model", said);
                break;
            }
            case "tool":
            case "function": {
                const label = m.name ?? m.tool_call_id ?? "tool";
                push("user", `Tool result (${label}):\n${text}`);
                break;
            }
            default:
                throw badRequest(`${where}.role must be one of system, developer, user, assistant, tool; got ${JSON.stringify(m.role)}`, `${where}.role`);
        }
    });
    const history = [];
    if (systemTexts.length > 0) history.push({type: "system", text: systemTexts.join("\n\n")});
    history.push(...turns);
    // The model answers in the last item: a fresh empty response, or the trailing assistant
    // message, which it continues.
    if (turns.length === 0 || turns[turns.length - 1].type !== "model") history.push({type: "model", response: []});
    return history;
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

const grammarCache = new Map();

async function grammarFor(llama, responseFormat) {
    if (responseFormat == null) return undefined;
    if (typeof responseFormat !== "object" || Array.isArray(responseFormat))
        throw badRequest("`response_format` must be an object", "response_format");
    let schema;
    switch (responseFormat.type) {
        case undefined:
        case "text":
            return undefined;
        case "json_schema":
            schema = responseFormat.json_schema?.schema;
            if (schema == null)
                throw badRequest("`response_format.json_schema.schema` is required for type json_schema", "response_format");
            break;
        case "json_object":
            schema = responseFormat.schema ?? responseFormat.json_schema?.schema;
            break;
        default:
            throw badRequest(`\`response_format.type\` must be text, json_object or json_schema; got ${JSON.stringify(responseFormat.type)}`, "response_format");
    }
    const key = schema == null ? "json" : JSON.stringify(schema);
    if (grammarCache.has(key)) return grammarCache.get(key);
    let grammar;
    try {
        grammar = schema == null
            ? await llama.getGrammarFor("json")
            : await llama.createGrammarForJsonSchema(prepareSchema(schema));
        if (schema != null && ignoredInSchema.size > 0)
            log(`response_format: the grammar does not enforce ${[...ignoredInSchema].join(", ")}`);
    } catch (e) {
        throw badRequest(`response_format: cannot turn this JSON schema into a grammar: ${e.message}`, "response_format");
    }
    if (grammarCache.size > 64) grammarCache.clear();
    grammarCache.set(key, grammar);
    return grammar;
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

    const history = buildHistory(body.messages);
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
    const grammar = await grammarFor(llama, body.response_format);

    const promptTokens = chat.chatWrapper.generateContextState({chatHistory: history}).contextText.tokenize(model.tokenizer).length;
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
    return {
        id: `chatcmpl-${randomUUID()}`,
        object: "chat.completion",
        created: Math.floor(Date.now() / 1000),
        model: typeof body.model === "string" && body.model !== "" ? body.model : modelId,
        system_fingerprint: `node-llama-cpp-${modelId}`,
        choices: [{
            index: 0,
            message: {role: "assistant", content: result.response, refusal: null},
            logprobs: null,
            finish_reason: stopReason === "maxTokens" ? "length" : "stop"
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
        const ending = abort.signal.aborted ? "client went away" : out.choices[0].finish_reason;
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
