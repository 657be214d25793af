// Every answer of the HTTP API is JSON and never cached. Every error has the same shape,
// `{ error: { code, message } }`, with a machine-readable code and a sentence for people.

const NO_STORE = { "cache-control": "no-store" };

export function apiJson(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return Response.json(body, { status, headers: { ...NO_STORE, ...headers } });
}

export function apiError(
  status: number,
  code: string,
  message: string,
  extra: Record<string, unknown> = {},
  headers: Record<string, string> = {},
): Response {
  return apiJson(status, { ...extra, error: { code, message } }, headers);
}

/** Whole seconds from `now` until `at`, at least 1, for a Retry-After header; null when unknown. */
export function retryAfterSeconds(at: string | undefined, now = Date.now()): number | null {
  if (!at) return null;
  const ms = Date.parse(at);
  if (Number.isNaN(ms)) return null;
  return Math.max(1, Math.ceil((ms - now) / 1000));
}
