import { z } from "zod";
import { checkDestinationUrl, sanitiseExcerpt, type EgressPolicy } from "@/lib/alerts/egress";
import { ReconciliationError } from "./errors";

// The one way a usage source reaches a provider: GET, JSON back. The URL's host is checked like a
// webhook's (a source's base URL is typed by an admin, so it must not reach inside the network
// unless the host is allow-listed), redirects are not followed, a 429 waits as long as the
// provider says (Retry-After, capped), a 5xx is retried a few times with backoff, and an error
// page becomes one sentence with the status and a short sanitised excerpt, never the key.

export type HttpOptions = {
  headers: Record<string, string>;
  egress: EgressPolicy;
  fetchImpl?: typeof fetch;
  /** Longest single wait on a 429's Retry-After or a 5xx backoff (default 60 s). */
  retryCapMs?: number;
  timeoutMs?: number;
  /** Values never to show in an error (the key, the token): replaced by *** in any excerpt. */
  secrets?: readonly string[];
  /** Who answers, for error sentences: "OpenAI". */
  provider: string;
  sleep?: (ms: number) => Promise<void>;
};

export const DEFAULT_RETRY_CAP_MS = 60_000;
const DEFAULT_TIMEOUT_MS = 30_000;
/** Attempts per request: the first and three retries (429, 5xx, a dropped connection). */
const MAX_ATTEMPTS = 4;
const BACKOFF_MS = [500, 2_000, 8_000];
const MAX_BODY_BYTES = 20 * 1024 * 1024;

const wait = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Milliseconds a Retry-After header asks for: seconds ("30") or an HTTP date; null when absent or unreadable. */
export function retryAfterMs(header: string | null, now = Date.now()): number | null {
  if (header === null) return null;
  const text = header.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const at = Date.parse(text);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}

function hide(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const s of secrets) if (s.length >= 4) out = out.split(s).join("***");
  return out;
}

// OpenAI and Anthropic: {"error": {"message"}}; Twilio: {"code", "message"}.
const ProviderErrorBody = z.union([z.object({ error: z.object({ message: z.string() }) }).transform((b) => b.error.message), z.object({ message: z.string() }).transform((b) => b.message)]);

/** The provider's own error message when the body is its JSON error, else the body's text without markup. */
function errorText(body: string): string {
  try {
    const parsed = ProviderErrorBody.safeParse(JSON.parse(body));
    if (parsed.success) return parsed.data;
  } catch {
    // Not JSON: an HTML error page or a proxy's text, excerpted as it is.
  }
  return body.replace(/<(script|style)[^>]*>[\s\S]*?<\/\1>/gi, " ").replace(/<[^>]+>/g, " ");
}

/** The body as text, refusing one past `max` bytes whatever Content-Length said. */
async function boundedText(response: Response, max: number): Promise<string | null> {
  if (!response.body) return "";
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > max) {
      await reader.cancel();
      return null;
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString("utf8");
}

function where(url: URL): string {
  return `${url.origin}${url.pathname}`;
}

function fail(provider: string, message: string): never {
  throw new ReconciliationError("provider_error", `${provider}: ${message}`);
}

/** GETs `target` and parses its JSON, with the checks and retries above. */
export async function getJson(target: string, opts: HttpOptions): Promise<unknown> {
  const text = await getText(target, { ...opts, accept: "application/json" });
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return fail(opts.provider, `${where(new URL(target))} answered 200 but not JSON: ${sanitiseExcerpt(hide(text, opts.secrets ?? []))}`);
  }
}

/** GETs `target` as text (a usage file at a URL, or a JSON page), with the checks and retries above. */
export async function getText(target: string, opts: HttpOptions & { accept?: string }): Promise<string> {
  let url: URL;
  try {
    url = new URL(target);
  } catch {
    return fail(opts.provider, `'${target.slice(0, 100)}' is not a URL`);
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") return fail(opts.provider, `${url.protocol} URLs are not fetched; use https`);
  try {
    await checkDestinationUrl(url.toString(), opts.egress);
  } catch (error) {
    return fail(opts.provider, `refused to reach ${url.host}: ${error instanceof Error ? error.message : String(error)}`);
  }
  const fetchImpl = opts.fetchImpl ?? fetch;
  const sleep = opts.sleep ?? wait;
  const cap = opts.retryCapMs ?? DEFAULT_RETRY_CAP_MS;
  const secrets = opts.secrets ?? [];
  for (let attempt = 1; ; attempt++) {
    let response: Response;
    try {
      response = await fetchImpl(url, {
        method: "GET",
        headers: { accept: opts.accept ?? "application/json", ...opts.headers },
        redirect: "manual",
        signal: AbortSignal.timeout(opts.timeoutMs ?? DEFAULT_TIMEOUT_MS),
      });
    } catch (error) {
      const why = error instanceof Error ? (error.name === "TimeoutError" ? "timed out" : `${error.message}${error.cause instanceof Error ? ` (${error.cause.message})` : ""}`) : String(error);
      if (attempt < MAX_ATTEMPTS) {
        await sleep(Math.min(cap, BACKOFF_MS[attempt - 1] ?? cap));
        continue;
      }
      return fail(opts.provider, `${where(url)} could not be reached after ${attempt} attempts: ${hide(why, secrets)}`);
    }
    if (response.ok) {
      const text = await boundedText(response, MAX_BODY_BYTES);
      if (text === null) return fail(opts.provider, `${where(url)} answered more than ${MAX_BODY_BYTES / 1024 / 1024} MB`);
      return text;
    }
    const body = (await boundedText(response, 64 * 1024).catch(() => "")) ?? "";
    const retryable = response.status === 429 || response.status >= 500;
    if (retryable && attempt < MAX_ATTEMPTS) {
      const asked = response.status === 429 ? retryAfterMs(response.headers.get("retry-after")) : null;
      await sleep(Math.min(cap, asked ?? BACKOFF_MS[attempt - 1] ?? cap));
      continue;
    }
    const status = `${response.status}${response.statusText ? ` ${response.statusText}` : ""}`;
    const excerpt = sanitiseExcerpt(hide(errorText(body), secrets));
    const hint =
      response.status === 401 || response.status === 403
        ? " (check the source's credential: the key may be wrong, revoked or not an admin key)"
        : response.status >= 300 && response.status < 400
          ? ` (a redirect to ${(response.headers.get("location") ?? "nowhere").replace(/[^\x21-\x7E]+/g, "").slice(0, 120)}, not followed)`
          : retryable
            ? ` (after ${attempt} attempts)`
            : "";
    return fail(opts.provider, `${where(url)} answered ${status}${hint}${excerpt ? `: ${excerpt}` : ""}`);
  }
}
