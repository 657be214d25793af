import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

// A stand-in for a paid model API, speaking OpenAI's Chat Completions format (non-streamed), so
// the demo's traffic drives llm.chat through the real `openai` SDK and the Ceilings wrapper
// exactly as a service would. It answers with about 60 % of max_completion_tokens, reports
// usage, and fails the requests whose prompt asks it to ("fail"), as a model API sometimes does.

export type FakeModel = { url: string; close: () => Promise<void> };

/** Starts the fake model on a loopback port; `baseURL` for the SDK is `${url}/v1`. */
export async function startFakeModel(): Promise<FakeModel> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      let body: { model?: string; messages?: { content?: unknown }[]; max_completion_tokens?: number };
      try {
        body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as typeof body;
      } catch {
        res.writeHead(400, { "content-type": "application/json" }).end(JSON.stringify({ error: { message: "invalid JSON", type: "invalid_request_error" } }));
        return;
      }
      const prompt = JSON.stringify(body.messages ?? []);
      if (req.url !== "/v1/chat/completions" || prompt.includes("fail")) {
        res
          .writeHead(500, { "content-type": "application/json" })
          .end(JSON.stringify({ error: { message: "The server had an error while processing your request.", type: "server_error" } }));
        return;
      }
      const promptTokens = Math.ceil(prompt.length / 4);
      const completionTokens = Math.max(1, Math.floor((body.max_completion_tokens ?? 1) * 0.6));
      res.writeHead(200, { "content-type": "application/json" }).end(
        JSON.stringify({
          id: `chatcmpl-demo-${Date.now()}`,
          object: "chat.completion",
          created: Math.floor(Date.now() / 1000),
          model: body.model ?? "demo",
          choices: [{ index: 0, message: { role: "assistant", content: "A demo answer.", refusal: null }, finish_reason: "stop", logprobs: null }],
          usage: { prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: promptTokens + completionTokens },
        }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, close: () => new Promise((resolve) => server.close(() => resolve())) };
}
