// The AI SDK (`ai`): a language-model middleware, so a model of any provider the AI SDK supports
// is reserved at its worst case and settled from the usage it reports, streamed or not.
//
//   const model = wrapLanguageModel({ model: openai("gpt-4o"), middleware: ceilingsMiddleware({ ceilings, endpoint: "llm.gpt-4o" }) });
//   const { text } = await generateText({ model, prompt, maxOutputTokens: 800, providerOptions: { ceilings: { caller: "acct_42" } } });
//
// Per call, `providerOptions.ceilings` carries the account, destination and idempotency key (no
// provider reads it). Worst case: the byte bound of the prompt and tools (tokens.ts) and
// maxOutputTokens, required. A stream settles at its `finish` part's usage; one that breaks or is
// cancelled after output began keeps the worst case; one that carried only an error is released.
import type { LanguageModelV3Middleware, LanguageModelV3StreamPart } from "@ai-sdk/provider";
import { charge, hold, type CallOptions, type Charge, type GuardOptions, WorstCaseError } from "./guard.js";
import { settledStream } from "./streams.js";
import { inputBound, textsOf } from "./tokens.js";

export { CeilingsRefusedError, WorstCaseError, type CallOptions } from "./guard.js";

/** The AI SDK's usage fields, and the endpoint part each is charged to. */
export type AiSdkParts = { input: string; cacheRead: string; cacheWrite: string; output: string };

export type AiSdkWrapOptions = GuardOptions & {
  /**
   * The endpoint's part names. Default `{ input: "input", cacheRead: "cache_read", cacheWrite:
   * "cache_write", output: "output" }`; map fields to one name to charge them alike, or `"amount"`.
   */
  parts?: AiSdkParts | "amount";
  /** An upper bound of the input tokens, required when the prompt holds files or images. */
  maxInputTokens?: number;
};

type TokenCounts = { total?: number; noCache?: number; cacheRead?: number; cacheWrite?: number };
type Usage = { inputTokens?: TokenCounts; outputTokens?: { total?: number } };
type CallParams = { prompt?: unknown[]; tools?: unknown; maxOutputTokens?: number; providerOptions?: Record<string, unknown> };

const DEFAULT_PARTS: AiSdkParts = { input: "input", cacheRead: "cache_read", cacheWrite: "cache_write", output: "output" };

function worstCase(options: AiSdkWrapOptions, params: CallParams): Charge {
  const output = params.maxOutputTokens;
  if (typeof output !== "number" || !Number.isSafeInteger(output) || output < 1)
    throw new WorstCaseError("set maxOutputTokens: without it the call's worst case is unknown");
  const input =
    options.maxInputTokens ?? inputBound({ messages: params.prompt?.length ?? 1, texts: textsOf([params.prompt, params.tools]), tools: params.tools });
  const caching = /"cache_?control"/i.test(JSON.stringify(params.prompt ?? []));
  return charge(options.parts ?? DEFAULT_PARTS, caching ? { cacheWrite: input, output } : { input, output });
}

function usageCharge(parts: AiSdkParts | "amount", usage: Usage): Charge {
  const i = usage.inputTokens ?? {};
  const cacheRead = i.cacheRead ?? 0;
  const cacheWrite = i.cacheWrite ?? 0;
  const input = i.noCache ?? Math.max(0, (i.total ?? 0) - cacheRead - cacheWrite);
  return charge(parts, { input, cacheRead, cacheWrite, output: usage.outputTokens?.total ?? 0 });
}

function callOptions(params: CallParams): CallOptions | undefined {
  const ours = params.providerOptions?.ceilings;
  return ours !== null && typeof ours === "object" ? (ours as CallOptions) : undefined;
}

/** A LanguageModel middleware for `wrapLanguageModel` (specification v3: the AI SDK 6). */
export function ceilingsMiddleware(options: AiSdkWrapOptions): LanguageModelV3Middleware {
  const parts = options.parts ?? DEFAULT_PARTS;
  return {
    specificationVersion: "v3",
    async wrapGenerate({ doGenerate, params }) {
      const held = await hold(options, callOptions(params), worstCase(options, params));
      let result;
      try {
        result = await doGenerate();
      } catch (error) {
        await held.release();
        throw error;
      }
      await (result.usage ? held.settle(usageCharge(parts, result.usage)) : held.keepWorstCase());
      return result;
    },
    async wrapStream({ doStream, params }) {
      const held = await hold(options, callOptions(params), worstCase(options, params));
      let result;
      try {
        result = await doStream();
      } catch (error) {
        await held.release();
        throw error;
      }
      let usage: Usage | undefined;
      let output = false;
      const parts$ = settledStream<LanguageModelV3StreamPart>(iterate(result.stream), held, {
        see(part) {
          if (part.type === "finish") usage = part.usage;
          else if (!["stream-start", "response-metadata", "error", "raw"].includes(part.type)) output = true;
        },
        final: () => (usage ? usageCharge(parts, usage) : output ? undefined : "release"),
        partial: () => (usage ? usageCharge(parts, usage) : held.worstCase),
      });
      const stream = new ReadableStream<LanguageModelV3StreamPart>({
        async pull(controller) {
          const next = await parts$.next();
          if (next.done) controller.close();
          else controller.enqueue(next.value);
        },
        async cancel() {
          await parts$.return(undefined);
        },
      });
      return { ...result, stream };
    },
  };
}

async function* iterate<T>(stream: ReadableStream<T>): AsyncGenerator<T> {
  const reader = stream.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      yield value;
    }
  } finally {
    await reader.cancel().catch(() => undefined);
    reader.releaseLock();
  }
}
