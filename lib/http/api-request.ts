// The API's handlers take an ApiRequest and give an ApiAnswer: plain data, no fetch Request,
// Response or Headers. The API server (npm run api) builds them straight from node:http, where
// undici's objects had cost more CPU than the rest of a reservation; Next's route files adapt with
// apiRequestOf and responseOf, so both servers run one implementation.

/** The largest request body the API takes (its bodies are a few hundred bytes). */
export const MAX_BODY_BYTES = 16 * 1024;

/** What a handler reads of a request. */
export type ApiRequest = {
  /** A header's value as Headers.get gives it (values of a repeated header joined by ", "), or null. */
  header: (name: string) => string | null;
  /** The query with its "?", as URL.search gives it: "" when there is none, never a fragment. */
  search: string;
  /** The body as read up to one byte past the limit (enough to tell it is too large); undefined when none was read. */
  body: Uint8Array | undefined;
};

/** What a handler answers: every answer of the API is a whole JSON text. */
export type ApiAnswer = { status: number; headers: Record<string, string>; body: string };

/** At most `limit` + 1 bytes of a stream: past the limit it is cancelled, not drained. */
async function readCapped(stream: ReadableStream<Uint8Array>, limit: number): Promise<Uint8Array> {
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel();
      break;
    }
  }
  return Buffer.concat(chunks, Math.min(size, limit + 1));
}

/** A fetch Request as the handlers read it (Next's routes), its body read up to `limit` + 1 bytes. */
export async function apiRequestOf(request: Request, limit = MAX_BODY_BYTES): Promise<ApiRequest> {
  const declared = Number(request.headers.get("content-length") ?? "0");
  // Too large by its own account: the body parser answers 413 from the header, nothing is read.
  const tooLarge = Number.isFinite(declared) && declared > limit;
  const body = request.body && !tooLarge ? await readCapped(request.body, limit) : undefined;
  return { header: (name) => request.headers.get(name), search: new URL(request.url).search, body };
}

/** An answer as a fetch Response (Next's routes). */
export function responseOf(answer: ApiAnswer): Response {
  return new Response(answer.body, { status: answer.status, headers: answer.headers });
}
