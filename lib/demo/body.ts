// Reading a request body as JSON, bounded: the free checks run before anything that costs.

export type JsonBody = { ok: true; value: unknown } | { ok: false; code: "unsupported_media_type" | "body_too_large" | "malformed_json"; message: string };

export async function readJsonBody(request: Request, maxBytes: number): Promise<JsonBody> {
  const type = request.headers.get("content-type") ?? "";
  if (!/^application\/json\s*(;|$)/i.test(type)) {
    return { ok: false, code: "unsupported_media_type", message: "send the body as application/json" };
  }
  const declared = Number(request.headers.get("content-length") ?? "0");
  if (declared > maxBytes) return { ok: false, code: "body_too_large", message: `the body must be at most ${maxBytes} bytes` };
  if (!request.body) return { ok: false, code: "malformed_json", message: "the body is empty" };

  // The declared length can lie (or be absent with chunked encoding): count while reading.
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel();
      return { ok: false, code: "body_too_large", message: `the body must be at most ${maxBytes} bytes` };
    }
    chunks.push(value);
  }
  const text = new TextDecoder("utf-8", { fatal: false }).decode(Buffer.concat(chunks));
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch {
    return { ok: false, code: "malformed_json", message: "the body is not valid JSON" };
  }
}
