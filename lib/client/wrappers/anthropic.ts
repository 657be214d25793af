// Anthropic (`@anthropic-ai/sdk`): messages.create, streamed or not, and messages.stream, each
// reserved at its worst case and settled from the usage Anthropic reports, cache writes and cache
// reads as their own parts.
//
//   const anthropic = withCeilings(new Anthropic(), { ceilings, endpoint: "llm.claude-sonnet" });
//   const message = await anthropic.withCall({ caller: "acct_42" }).messages.create({ model, max_tokens: 1024, messages });
//
// Worst case: input by the byte bound (Anthropic publishes no tokenizer for its current models;
// tokens.ts), charged to the cache-write part when the request marks anything `cache_control`
// (a write costs more than plain input), else to input; output from max_tokens, which the API
// requires. A stream reports its input when it starts and its output when it ends: cut short, it
// settles the input it reported and the worst case of the output.
import { MessageStream } from "@anthropic-ai/sdk/lib/MessageStream";
import { charge, hold, type CallOptions, type Charge, type GuardOptions, type Hold, WorstCaseError } from "./guard.js";
import { settledStream, likeStream } from "./streams.js";
import { inputBound, textsOf } from "./tokens.js";
import { withCallOptions, type Guarded, type WithCeilings } from "./wrap.js";

export { CeilingsRefusedError, WorstCaseError, type CallOptions } from "./guard.js";

/** Anthropic's usage fields, and the endpoint part each is charged to. */
export type AnthropicParts = { input: string; cacheWrite: string; cacheRead: string; output: string };

export type AnthropicWrapOptions = GuardOptions & {
  /**
   * The endpoint's part names. Default `{ input: "input", cacheWrite: "cache_write", cacheRead:
   * "cache_read", output: "output" }`; map fields to one name to charge them alike, or `"amount"`.
   */
  parts?: AnthropicParts | "amount";
  /** An upper bound of the input tokens, required when the input holds images or documents. */
  maxInputTokens?: number;
};

type Usage = {
  input_tokens?: number | null;
  output_tokens?: number | null;
  cache_creation_input_tokens?: number | null;
  cache_read_input_tokens?: number | null;
};
type Body = Record<string, unknown> & { max_tokens?: number; messages?: unknown[]; stream?: boolean };
type Event = { type?: string; message?: { usage?: Usage }; usage?: Usage };

const DEFAULT_PARTS: AnthropicParts = { input: "input", cacheWrite: "cache_write", cacheRead: "cache_read", output: "output" };

function worstCase(options: AnthropicWrapOptions, body: Body): Charge {
  const output = body.max_tokens;
  if (typeof output !== "number" || !Number.isSafeInteger(output) || output < 1)
    throw new WorstCaseError("set max_tokens: without it the call's worst case is unknown");
  const input =
    options.maxInputTokens ??
    inputBound({ messages: (body.messages?.length ?? 0) + 1, texts: textsOf([body.system, body.messages, body.tools]), tools: body.tools });
  const caching = JSON.stringify(body).includes('"cache_control"');
  return charge(options.parts ?? DEFAULT_PARTS, caching ? { cacheWrite: input, output } : { input, output });
}

function usageCharge(parts: AnthropicParts | "amount", usage: Usage, output = usage.output_tokens ?? 0): Charge {
  return charge(parts, {
    input: usage.input_tokens ?? 0,
    cacheWrite: usage.cache_creation_input_tokens ?? 0,
    cacheRead: usage.cache_read_input_tokens ?? 0,
    output,
  });
}

/** The raw event stream of messages.create({ stream: true }), settling as it ends. */
function accountedEvents(parts: AnthropicParts | "amount", held: Hold, events: AsyncIterable<unknown>, maxTokens: number): AsyncGenerator<unknown> {
  let started: Usage | undefined;
  let delta: Usage | undefined;
  let stopped = false;
  // message_delta's usage is cumulative and may restate the input fields: the latest of each wins.
  const reported = (): Usage => ({ ...started, ...Object.fromEntries(Object.entries(delta ?? {}).filter(([, v]) => v !== null && v !== undefined)) });
  return settledStream(events, held, {
    see(raw) {
      const e = raw as Event;
      if (e.type === "message_start") started = e.message?.usage;
      else if (e.type === "message_delta") delta = e.usage;
      else if (e.type === "message_stop") stopped = true;
    },
    final: () => (started && delta && stopped ? usageCharge(parts, reported()) : undefined),
    // The input is known once the message started; the output only at its end.
    partial: () => (started ? usageCharge(parts, reported(), delta ? (reported().output_tokens ?? maxTokens) : maxTokens) : held.worstCase),
  });
}

function create(options: AnthropicWrapOptions): Guarded {
  const parts = options.parts ?? DEFAULT_PARTS;
  return async (call, original, [rawBody, requestOptions]) => {
    const body = rawBody as Body;
    const held = await hold(options, call, worstCase(options, body));
    let answer: unknown;
    try {
      answer = await original(body, requestOptions);
    } catch (error) {
      await held.release();
      throw error;
    }
    if (body.stream !== true) {
      const usage = (answer as { usage?: Usage }).usage;
      await (usage ? held.settle(usageCharge(parts, usage)) : held.keepWorstCase());
      return answer;
    }
    const stream = answer as AsyncIterable<unknown> & { controller: AbortController };
    return likeStream(stream, () => accountedEvents(parts, held, stream, body.max_tokens ?? 0));
  };
}

/**
 * messages.stream: the SDK's own MessageStream (its events, finalMessage(), abort()) fed by a
 * reserved messages.create stream. A refusal reaches it as its `error`, an AnthropicError whose
 * `cause` is the CeilingsRefusedError.
 */
function stream(guardedCreate: Guarded, messages: { create: (body: unknown, opts?: unknown) => Promise<unknown> }): Guarded {
  return (call: CallOptions | undefined, _original, [rawBody, requestOptions]) => {
    let events: AsyncIterator<unknown> | undefined;
    const encoder = new TextEncoder();
    const readable = new ReadableStream<Uint8Array>({
      async pull(controller) {
        if (events === undefined) {
          const body = { ...(rawBody as Body), stream: true };
          const s = (await guardedCreate(call, messages.create.bind(messages) as (...a: unknown[]) => unknown, [
            body,
            requestOptions,
          ])) as AsyncIterable<unknown>;
          events = s[Symbol.asyncIterator]();
        }
        const next = await events.next();
        if (next.done) controller.close();
        else controller.enqueue(encoder.encode(`${JSON.stringify(next.value)}\n`));
      },
      async cancel() {
        await events?.return?.();
      },
    });
    return MessageStream.fromReadableStream(readable);
  };
}

/** The Anthropic client with messages.create and messages.stream reserved and settled. */
export function withCeilings<C extends object>(client: C, options: AnthropicWrapOptions): WithCeilings<C> {
  const { messages } = client as unknown as { messages: { create: (body: unknown, opts?: unknown) => Promise<unknown> } };
  const guardedCreate = create(options);
  return withCallOptions(client, { "messages.create": guardedCreate, "messages.stream": stream(guardedCreate, messages) });
}
