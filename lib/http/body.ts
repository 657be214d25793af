// Request bodies are read as bytes with a hard cap before any parsing: a client cannot make the
// server buffer or parse more than the limit, whatever Content-Length claims.

import { type ApiRequest, apiRequestOf, MAX_BODY_BYTES } from "./api-request";
import { checkJsonDepth, checkStrictJson } from "./strict-json";

export type BodyError = {
  ok: false;
  status: 400 | 413;
  code: "invalid_json" | "body_too_large" | "duplicate_field" | "invalid_characters" | "nesting_too_deep";
  message: string;
};
export type BodyResult = { ok: true; value: unknown; empty: boolean } | BodyError;

function tooLarge(limit: number): BodyError {
  return { ok: false, status: 413, code: "body_too_large", message: `the request body must be at most ${limit} bytes` };
}

// Stateless between calls (no streaming): one decoder serves every request.
const UTF8 = new TextDecoder("utf-8", { fatal: true });
const EMPTY = new Uint8Array(0);

/**
 * Parses a JSON body of at most `limit` bytes. An empty body reads as `{}` with `empty: true`.
 * `edgeTrimmed` names top-level fields trimmed like a caller, whose edge whitespace is no control.
 */
export function parseJsonBody(request: Pick<ApiRequest, "header" | "body">, limit = MAX_BODY_BYTES, edgeTrimmed: readonly string[] = []): BodyResult {
  const declared = Number(request.header("content-length") ?? "0");
  if (Number.isFinite(declared) && declared > limit) return tooLarge(limit);
  const bytes = request.body ?? EMPTY;
  if (bytes.byteLength > limit) return tooLarge(limit);
  let text: string;
  try {
    text = UTF8.decode(bytes);
  } catch {
    return { ok: false, status: 400, code: "invalid_json", message: "the request body is not valid UTF-8" };
  }
  if (text.trim() === "") return { ok: true, value: {}, empty: true };
  // Before the parse and the checks that walk the parsed value: any depth is a 400, never a crash.
  const deep = checkJsonDepth(text);
  if (deep) return { ok: false, status: 400, ...deep };
  let value: unknown;
  try {
    value = JSON.parse(text) as unknown;
  } catch (error) {
    const detail = error instanceof SyntaxError ? `: ${error.message}` : "";
    return { ok: false, status: 400, code: "invalid_json", message: `the request body is not valid JSON${detail}` };
  }
  const strict = checkStrictJson(text, value, edgeTrimmed);
  if (strict) return { ok: false, status: 400, ...strict };
  return { ok: true, value, empty: false };
}

/** parseJsonBody of a fetch Request (the demo's subscribe route), its body read up to the limit. */
export async function readJsonBody(request: Request, limit = MAX_BODY_BYTES, edgeTrimmed: readonly string[] = []): Promise<BodyResult> {
  return parseJsonBody(await apiRequestOf(request, limit), limit, edgeTrimmed);
}
