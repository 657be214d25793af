// The worst case of a model call's input, before the call. Two ways, both never below what the
// provider will bill:
// - a tokenizer for the model's encoding (OpenAI's models: gpt-tokenizer's o200k_base or
//   cl100k_base when the package is installed, or `countTokens` you pass), plus the chat format's
//   per-message tokens;
// - otherwise a byte bound: every token of a byte-level BPE (OpenAI's and Anthropic's tokenizers)
//   covers at least one byte of UTF-8, so a text of n bytes is at most n tokens. It holds for any
//   model and over-reserves (about 4 bytes a token in English) until settle gives the rest back.
// Media (images, audio, files) cannot be bounded from their bytes: such a call needs
// `maxInputTokens`, else WorstCaseError.
import { WorstCaseError } from "./guard.js";

/** Counts the tokens of a text in the model's encoding. */
export type CountTokens = (text: string) => number;

/** Tokens the chat format adds per message (role, separators) and to prime the answer: above the documented 3 and 3. */
const PER_MESSAGE = 8;
const PER_REQUEST = 16;
/**
 * Tokens a provider adds, unseen, when a request defines tools: Anthropic documents a tool-use
 * system prompt of up to 346 tokens (more for its server tools), OpenAI renders the definitions
 * in a format of its own. Counted once per request that has any, generously.
 */
export const TOOLS_OVERHEAD = 1024;

const MEDIA_TYPES = new Set(["image_url", "input_image", "image", "input_audio", "audio", "file", "input_file", "document"]);

/** Every string in the request's messages, system prompt and tool definitions, or an error naming the media. */
export function textsOf(value: unknown, out: string[] = []): string[] {
  if (typeof value === "string") out.push(value);
  else if (Array.isArray(value)) for (const v of value) textsOf(v, out);
  else if (value !== null && typeof value === "object") {
    const type = (value as { type?: unknown }).type;
    if (typeof type === "string" && MEDIA_TYPES.has(type)) {
      throw new WorstCaseError(`the input holds a ${type} part, whose tokens cannot be bounded before the call: pass maxInputTokens`);
    }
    for (const [k, v] of Object.entries(value)) {
      // Keys of a tool's JSON schema are read by the model too; the text of every other key is data.
      out.push(k);
      textsOf(v, out);
    }
  }
  return out;
}

const utf8 = new TextEncoder();

/** The most input tokens the call can bill: its texts counted (or bounded by bytes) plus the format's overhead. */
export function inputBound(parts: { messages: number; texts: string[]; tools?: unknown }, count?: CountTokens): number {
  const hasTools = Array.isArray(parts.tools) ? parts.tools.length > 0 : parts.tools !== undefined && parts.tools !== null;
  let tokens = PER_REQUEST + PER_MESSAGE * parts.messages + (hasTools ? TOOLS_OVERHEAD : 0);
  for (const text of parts.texts) tokens += count ? count(text) + 1 : utf8.encode(text).length;
  return tokens;
}

type Encoding = "o200k_base" | "cl100k_base";

/** The encoding of an OpenAI model by its published family, or undefined (then the byte bound). */
export function openAiEncoding(model: string): Encoding | undefined {
  if (/^(gpt-4o|chatgpt-4o|gpt-4\.1|gpt-4\.5|gpt-5|o[1-9])/.test(model)) return "o200k_base";
  if (/^(gpt-4|gpt-3\.5)/.test(model)) return "cl100k_base";
  return undefined;
}

const loaded = new Map<Encoding, Promise<CountTokens | undefined>>();

/** gpt-tokenizer's counter for the encoding when the package is installed; undefined when it is not. */
export function tokenizerFor(encoding: Encoding | undefined): Promise<CountTokens | undefined> {
  if (encoding === undefined) return Promise.resolve(undefined);
  let counter = loaded.get(encoding);
  if (counter === undefined) {
    const specifier = `gpt-tokenizer/encoding/${encoding}`;
    counter = import(/* webpackIgnore: true */ specifier).then(
      (m: { countTokens?: CountTokens }) => m.countTokens,
      () => undefined,
    );
    loaded.set(encoding, counter);
  }
  return counter;
}
