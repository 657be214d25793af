// Request bodies are read as bytes with a hard cap before any parsing: a client cannot make the
// server buffer or parse more than the limit, whatever Content-Length claims.

export const MAX_BODY_BYTES = 16 * 1024;

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

async function readCapped(request: Request, limit: number): Promise<Uint8Array | null> {
  if (!request.body) return new Uint8Array(0);
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel();
      return null;
    }
    chunks.push(value);
  }
  const out = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.byteLength;
  }
  return out;
}

/**
 * Reads a JSON body of at most `limit` bytes. An empty body reads as `{}` with `empty: true`.
 * `edgeTrimmed` names top-level fields trimmed like a caller, whose edge whitespace is no control.
 */
export async function readJsonBody(request: Request, limit = MAX_BODY_BYTES, edgeTrimmed: readonly string[] = []): Promise<BodyResult> {
  const declared = Number(request.headers.get("content-length") ?? "0");
  if (Number.isFinite(declared) && declared > limit) return tooLarge(limit);
  const bytes = await readCapped(request, limit);
  if (bytes === null) return tooLarge(limit);
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
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
