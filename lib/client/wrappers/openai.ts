// OpenAI (the `openai` package): chat.completions.create and responses.create, streamed or not,
// each reserved at its worst case and settled from the `usage` OpenAI reports.
//
//   const openai = withCeilings(new OpenAI(), { ceilings, endpoint: "llm.gpt-4o" });
//   const answer = await openai.withCall({ caller: "acct_42" }).chat.completions.create({ model, messages, max_completion_tokens: 800 });
//
// Worst case: input tokens counted with gpt-tokenizer in the model's encoding when it is
// installed (or `countTokens`), else the byte bound (tokens.ts); output tokens from
// max_completion_tokens / max_tokens (times `n`) or max_output_tokens. A call without an output
// bound is refused with WorstCaseError before anything is sent: a model's documented maximum is
// tens of thousands of tokens, so that reservation would refuse most calls anyway, and an
// unbounded call is the one a ceiling exists for.
import { charge, hold, type Charge, type GuardOptions, WorstCaseError } from "./guard.js";
import { settledStream, likeStream } from "./streams.js";
import { inputBound, openAiEncoding, textsOf, tokenizerFor, type CountTokens } from "./tokens.js";
import { withCallOptions, type Guarded, type WithCeilings } from "./wrap.js";

export { CeilingsRefusedError, WorstCaseError, type CallOptions } from "./guard.js";

/** The usage fields OpenAI reports, and the endpoint part each is charged to. */
export type OpenAIParts = { input: string; cachedInput: string; output: string };

export type OpenAIWrapOptions = GuardOptions & {
  /**
   * The endpoint's part names for each usage field. Default `{ input: "input", cachedInput:
   * "cached_input", output: "output" }`; map two fields to one name to charge them alike (an
   * endpoint without a cached-input price: `cachedInput: "input"`), or `"amount"` for an endpoint
   * with one price per token.
   */
  parts?: OpenAIParts | "amount";
  /** Counts a text's tokens for the model; default gpt-tokenizer when installed, else the byte bound. */
  countTokens?: CountTokens;
  /** An upper bound of the input tokens, required when the input holds images, audio or files. */
  maxInputTokens?: number;
};

type Usage = {
  prompt_tokens?: number;
  completion_tokens?: number;
  input_tokens?: number;
  output_tokens?: number;
  prompt_tokens_details?: { cached_tokens?: number } | null;
  input_tokens_details?: { cached_tokens?: number } | null;
};
type Body = Record<string, unknown> & { model?: string; stream?: boolean | null };

const DEFAULT_PARTS: OpenAIParts = { input: "input", cachedInput: "cached_input", output: "output" };

function usageCharge(parts: OpenAIParts | "amount", usage: Usage): Charge {
  const input = usage.prompt_tokens ?? usage.input_tokens ?? 0;
  const cached = usage.prompt_tokens_details?.cached_tokens ?? usage.input_tokens_details?.cached_tokens ?? 0;
  const output = usage.completion_tokens ?? usage.output_tokens ?? 0;
  return charge(parts, { input: input - cached, cachedInput: cached, output });
}

async function worstCase(options: OpenAIWrapOptions, body: Body, api: "chat" | "responses"): Promise<Charge> {
  let output: number | undefined;
  if (api === "chat") {
    const max = (body.max_completion_tokens ?? body.max_tokens) as number | null | undefined;
    if (typeof max === "number") output = max * (typeof body.n === "number" ? body.n : 1);
  } else if (typeof body.max_output_tokens === "number") output = body.max_output_tokens;
  if (output === undefined || !Number.isSafeInteger(output) || output < 1) {
    throw new WorstCaseError(
      api === "chat"
        ? "set max_completion_tokens (or max_tokens): without an output bound the call's worst case is unknown"
        : "set max_output_tokens: without an output bound the call's worst case is unknown",
    );
  }
  let input = options.maxInputTokens;
  if (input === undefined) {
    const source = api === "chat" ? [body.messages, body.tools, body.response_format] : [body.instructions, body.input, body.tools, body.text];
    const messages = api === "chat" ? (Array.isArray(body.messages) ? body.messages.length : 1) : Array.isArray(body.input) ? body.input.length + 1 : 2;
    const count = options.countTokens ?? (await tokenizerFor(openAiEncoding(String(body.model ?? ""))));
    input = inputBound({ messages, texts: textsOf(source), tools: body.tools }, count);
  }
  return charge(options.parts ?? DEFAULT_PARTS, { input, cachedInput: 0, output });
}

function guard(options: OpenAIWrapOptions, api: "chat" | "responses"): Guarded {
  const parts = options.parts ?? DEFAULT_PARTS;
  return async (call, original, [rawBody, requestOptions]) => {
    let body = rawBody as Body;
    // A stream reports its usage only when asked (chat), in its last chunk.
    if (api === "chat" && body.stream === true) body = { ...body, stream_options: { ...(body.stream_options as object | undefined), include_usage: true } };
    const held = await hold(options, call, await worstCase(options, body, api));
    let answer: unknown;
    try {
      answer = await original(body, requestOptions);
    } catch (error) {
      await held.release();
      throw error;
    }
    if (body.stream !== true) {
      const usage = (answer as { usage?: Usage | null }).usage;
      await (usage ? held.settle(usageCharge(parts, usage)) : held.keepWorstCase());
      return answer;
    }
    const stream = answer as AsyncIterable<unknown> & { controller: AbortController };
    let usage: Usage | undefined;
    return likeStream(stream, () =>
      settledStream(stream, held, {
        see(chunk) {
          const c = chunk as { usage?: Usage | null; response?: { usage?: Usage | null } };
          const reported = c.usage ?? c.response?.usage;
          if (reported) usage = reported;
        },
        final: () => (usage ? usageCharge(parts, usage) : undefined),
        // OpenAI reports usage only at the end: a stream cut before it keeps the worst case.
        partial: () => (usage ? usageCharge(parts, usage) : held.worstCase),
      }),
    );
  };
}

/** The OpenAI client with chat.completions.create and responses.create reserved and settled. */
export function withCeilings<C extends object>(client: C, options: OpenAIWrapOptions): WithCeilings<C> {
  return withCallOptions(client, { "chat.completions.create": guard(options, "chat"), "responses.create": guard(options, "responses") });
}
