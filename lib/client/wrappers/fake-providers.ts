// Test support: one loopback HTTP server speaking the providers' published wire formats, so the
// real SDKs run unchanged against it: OpenAI's Chat Completions and Responses (JSON and server-sent
// events, the usage chunk when asked), Anthropic's Messages (JSON and its event stream) and
// Twilio's Messages resource (form in, JSON out). It bills every request as the provider would
// and records it under the scenario named in the prompt ("[name] ...") or the SMS body.
//
// The model name picks the behaviour: `<model>:cached` reports cached input, `:cachewrite` /
// `:cacheread` Anthropic's cache parts, `:break` cuts a stream after its first output, `:error`
// sends an error event mid-stream, `:429` is always rate limited, `:429once` only the first time,
// `:hold` answers only when the test calls release().
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { countTokens } from "gpt-tokenizer/encoding/o200k_base";

export type Billed = { scenario: string; api: "chat" | "responses" | "messages" | "sms"; parts: Record<string, number>; complete: boolean };

export type FakeProviders = {
  url: string;
  billed: Billed[];
  /** Requests waiting on a `:hold` model. */
  held(): number;
  release(): void;
  close(): Promise<void>;
};

const OUTPUT_TOKENS = 12;

function scenarioOf(text: string): string {
  return /\[([^\]]+)\]/.exec(text)?.[1] ?? "unnamed";
}

function allText(value: unknown): string {
  if (typeof value === "string") return value;
  if (Array.isArray(value)) return value.map(allText).join(" ");
  if (value !== null && typeof value === "object") return Object.values(value).map(allText).join(" ");
  return "";
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(JSON.stringify(body));
}

function sse(res: ServerResponse): (event: string | null, data: unknown) => void {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" });
  return (event, data) => res.write(`${event ? `event: ${event}\n` : ""}data: ${typeof data === "string" ? data : JSON.stringify(data)}\n\n`);
}

const tick = () => new Promise((r) => setTimeout(r, 5));

/** Twilio's segments, counted here independently of the wrapper: GSM-7 153/160, UCS-2 67/70 (test bodies never straddle an escape or a surrogate). */
function twilioSegments(body: string): number {
  const gsm = /^[@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !"#¤%&'()*+,\-./0-9:;<=>?¡A-ZÄÖÑÜ§¿a-zäöñüà^{}\\[~\]|€]*$/.test(body);
  const length = gsm ? body.length + (body.match(/[\^{}\\[~\]|€]/g)?.length ?? 0) : body.length;
  const [single, multi] = gsm ? [160, 153] : [70, 67];
  return length <= single ? 1 : Math.ceil(length / multi);
}

export async function startFakeProviders(): Promise<FakeProviders> {
  const billed: Billed[] = [];
  const seen = new Map<string, number>();
  let waiting: (() => void)[] = [];

  async function chat(req: IncomingMessage, res: ServerResponse, body: Record<string, unknown>, api: "chat" | "responses"): Promise<void> {
    const model = String(body.model ?? "");
    const messages =
      api === "chat"
        ? (body.messages as { content: unknown }[])
        : typeof body.input === "string"
          ? [{ content: body.input }]
          : (body.input as { content: unknown }[]);
    const scenario = scenarioOf(allText(messages));
    const prompt =
      messages.reduce((n, m) => n + countTokens(allText(m.content)) + 3, 3) +
      (api === "responses" && typeof body.instructions === "string" ? countTokens(body.instructions) : 0);
    const cached = model.includes(":cached") ? Math.floor(prompt / 2) : 0;
    const max = Number(body.max_completion_tokens ?? body.max_tokens ?? body.max_output_tokens);
    const output = Math.min(max, OUTPUT_TOKENS);
    const usageOf = (n: number) =>
      api === "chat"
        ? {
            prompt_tokens: prompt,
            completion_tokens: n,
            total_tokens: prompt + n,
            prompt_tokens_details: { cached_tokens: cached, audio_tokens: 0 },
            completion_tokens_details: { reasoning_tokens: 0 },
          }
        : {
            input_tokens: prompt,
            input_tokens_details: { cached_tokens: cached },
            output_tokens: n,
            output_tokens_details: { reasoning_tokens: 0 },
            total_tokens: prompt + n,
          };
    const bill = (n: number, complete: boolean) => billed.push({ scenario, api, parts: { input: prompt - cached, cached_input: cached, output: n }, complete });
    if (model.includes(":hold")) await new Promise<void>((r) => waiting.push(r));
    const created = Math.floor(Date.now() / 1000);
    if (body.stream !== true) {
      bill(output, true);
      const text = "tok ".repeat(output);
      if (api === "chat") {
        json(res, 200, {
          id: "chatcmpl-fake",
          object: "chat.completion",
          created,
          model,
          choices: [{ index: 0, message: { role: "assistant", content: text, refusal: null }, finish_reason: "stop", logprobs: null }],
          usage: usageOf(output),
        });
      } else {
        json(res, 200, {
          id: "resp_fake",
          object: "response",
          created_at: created,
          status: "completed",
          model,
          output: [{ type: "message", id: "msg_fake", status: "completed", role: "assistant", content: [{ type: "output_text", text, annotations: [] }] }],
          usage: usageOf(output),
        });
      }
      return;
    }
    const send = sse(res);
    if (api === "chat") {
      const chunk = (delta: object, finish: string | null) => ({
        id: "chatcmpl-fake",
        object: "chat.completion.chunk",
        created,
        model,
        choices: [{ index: 0, delta, finish_reason: finish, logprobs: null }],
      });
      send(null, chunk({ role: "assistant", content: "" }, null));
      for (let i = 0; i < output; i++) {
        send(null, chunk({ content: "tok " }, null));
        await tick();
        if (i === 2 && model.includes(":break")) return void (bill(i + 1, false), res.destroy());
        if (i === 2 && model.includes(":error"))
          return void (
            bill(i + 1, false),
            send(null, { error: { message: "The server had an error while processing your request.", type: "server_error" } }),
            res.end()
          );
      }
      send(null, chunk({}, "stop"));
      const include = (body.stream_options as { include_usage?: boolean } | undefined)?.include_usage === true;
      if (include) send(null, { id: "chatcmpl-fake", object: "chat.completion.chunk", created, model, choices: [], usage: usageOf(output) });
      bill(output, true);
      send(null, "[DONE]");
      res.end();
      return;
    }
    let sequence = 0;
    const event = (type: string, data: object) => send(type, { type, sequence_number: sequence++, ...data });
    const response = (status: string, usage: unknown) => ({ id: "resp_fake", object: "response", created_at: created, status, model, output: [], usage });
    event("response.created", { response: response("in_progress", null) });
    for (let i = 0; i < output; i++) {
      event("response.output_text.delta", { item_id: "msg_fake", output_index: 0, content_index: 0, delta: "tok " });
      await tick();
      if (i === 2 && model.includes(":break")) return void (bill(i + 1, false), res.destroy());
    }
    event("response.completed", { response: response("completed", usageOf(output)) });
    bill(output, true);
    res.end();
  }

  async function messages(res: ServerResponse, body: Record<string, unknown>): Promise<void> {
    const model = String(body.model ?? "");
    const text = allText([body.system, body.messages, body.tools]);
    const scenario = scenarioOf(allText(body.messages));
    // Anthropic's count is its own; about a token for every 4 bytes, and never above the bytes.
    const total = Math.ceil(Buffer.byteLength(text) / 4) + 5;
    const cacheWrite = model.includes(":cachewrite") ? Math.floor(total * 0.6) : 0;
    const cacheRead = model.includes(":cacheread") ? Math.floor(total * 0.6) : 0;
    const input = total - cacheWrite - cacheRead;
    const output = Math.min(Number(body.max_tokens), OUTPUT_TOKENS);
    const usage = (n: number) => ({
      input_tokens: input,
      cache_creation_input_tokens: cacheWrite,
      cache_read_input_tokens: cacheRead,
      output_tokens: n,
      service_tier: "standard",
    });
    const bill = (n: number, complete: boolean) =>
      billed.push({ scenario, api: "messages", parts: { input, cache_write: cacheWrite, cache_read: cacheRead, output: n }, complete });
    const message = (content: unknown[], stop: string | null, n: number) => ({
      id: "msg_fake",
      type: "message",
      role: "assistant",
      model,
      content,
      stop_reason: stop,
      stop_sequence: null,
      usage: usage(n),
    });
    if (body.stream !== true) {
      bill(output, true);
      json(res, 200, message([{ type: "text", text: "tok ".repeat(output), citations: null }], "end_turn", output));
      return;
    }
    const send = sse(res);
    send("message_start", { type: "message_start", message: message([], null, 1) });
    send("content_block_start", { type: "content_block_start", index: 0, content_block: { type: "text", text: "", citations: null } });
    for (let i = 0; i < output; i++) {
      send("content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "tok " } });
      await tick();
      if (i === 2 && model.includes(":break")) return void (bill(i + 1, false), res.destroy());
      if (i === 2 && model.includes(":error")) {
        bill(i + 1, false);
        send("error", { type: "error", error: { type: "overloaded_error", message: "Overloaded" } });
        return void res.end();
      }
    }
    send("content_block_stop", { type: "content_block_stop", index: 0 });
    send("message_delta", { type: "message_delta", delta: { stop_reason: "end_turn", stop_sequence: null }, usage: { output_tokens: output } });
    send("message_stop", { type: "message_stop" });
    bill(output, true);
    res.end();
  }

  const server = createServer((req, res) => {
    void (async () => {
      const raw = await readBody(req);
      const url = req.url ?? "";
      if (url.startsWith("/twilio/")) {
        const form = new URLSearchParams(raw);
        const sid = /Accounts\/([^/]+)\/Messages\.json$/.exec(url)?.[1];
        if (req.method !== "POST" || !sid) return json(res, 404, { code: 20404, message: "The requested resource was not found", status: 404 });
        // Smart Encoding: a curly apostrophe is sent as a straight one, in GSM-7.
        const body = form.get("SmartEncoded") === "true" ? (form.get("Body") ?? "").replaceAll("’", "'") : (form.get("Body") ?? "");
        const segments = twilioSegments(body);
        billed.push({ scenario: scenarioOf(body), api: "sms", parts: { units: segments }, complete: true });
        return json(res, 201, {
          sid: `SM${Math.random().toString(16).slice(2).padEnd(32, "0")}`,
          account_sid: sid,
          to: form.get("To"),
          from: form.get("From"),
          body,
          status: "queued",
          num_segments: String(segments),
          num_media: "0",
          direction: "outbound-api",
          price: null,
          price_unit: "USD",
          api_version: "2010-04-01",
          date_created: new Date().toUTCString(),
          uri: `/2010-04-01/Accounts/${sid}/Messages/SMfake.json`,
        });
      }
      const body = JSON.parse(raw || "{}") as Record<string, unknown>;
      const model = String(body.model ?? "");
      if (model.includes(":429")) {
        const n = (seen.get(allText(body)) ?? 0) + 1;
        seen.set(allText(body), n);
        if (model.includes(":429once") ? n === 1 : true) {
          const error = url.startsWith("/anthropic")
            ? { type: "error", error: { type: "rate_limit_error", message: "Number of requests has exceeded your rate limit" } }
            : { error: { message: "Rate limit reached for requests", type: "requests", param: null, code: "rate_limit_exceeded" } };
          return json(res, 429, error, { "retry-after": "0", "retry-after-ms": "10" });
        }
      }
      if (url === "/openai/v1/chat/completions") return chat(req, res, body, "chat");
      if (url === "/openai/v1/responses") return chat(req, res, body, "responses");
      if (url === "/anthropic/v1/messages") return messages(res, body);
      json(res, 404, { error: { message: `no route ${url}`, type: "invalid_request_error" } });
    })().catch((error: unknown) => {
      if (!res.headersSent) json(res, 500, { error: { message: String(error), type: "server_error" } });
      else res.destroy();
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    billed,
    held: () => waiting.length,
    release() {
      const go = waiting;
      waiting = [];
      for (const r of go) r();
    },
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
