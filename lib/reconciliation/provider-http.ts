import { request as httpRequest, type IncomingMessage } from "node:http";
import { request as httpsRequest } from "node:https";
import type { LookupFunction } from "node:net";
import { Readable } from "node:stream";
import { z } from "zod";
import { checkedLookup, EgressRefused, hostOf, isAllowed, resolveChecked, sanitiseExcerpt, type EgressPolicy } from "@/lib/alerts/egress";
import { ReconciliationError } from "./errors";

// The one way a usage source reaches a provider: GET, JSON back. The URL's host is checked like a
// webhook's (a source's base URL is typed by an admin, so it must not reach inside the network
// unless the host is allow-listed) before the request and again on the very socket it opens (the
// check runs inside the connection's DNS lookup, so a name that answers a public address first and
// 127.0.0.1 next is refused), a name whose lookup fails is not fetched, redirects are not followed, a 429 waits as long as the
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
  /** The whole pull's deadline: aborts a request in flight and any wait between attempts. */
  signal?: AbortSignal;
};

export const DEFAULT_RETRY_CAP_MS = 60_000;
const DEFAULT_TIMEOUT_MS = 30_000;
/** Attempts per request: the first and three retries (429, 5xx, a dropped connection). */
const MAX_ATTEMPTS = 4;
const BACKOFF_MS = [500, 2_000, 8_000];
const MAX_BODY_BYTES = 20 * 1024 * 1024;

const wait = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Waits `ms` (a Retry-After, a backoff) unless the pull's deadline comes first: then throws. */
async function pause(sleep: (ms: number) => Promise<void>, ms: number, signal: AbortSignal | undefined, provider: string): Promise<void> {
  if (!signal) return sleep(ms);
  if (signal.aborted) return fail(provider, "the pull ran out of time (its deadline passed)");
  let onAbort: (() => void) | undefined;
  const aborted = new Promise<"aborted">((resolve) => {
    onAbort = () => resolve("aborted");
    signal.addEventListener("abort", onAbort, { once: true });
  });
  try {
    const outcome = await Promise.race([sleep(ms).then(() => "slept" as const), aborted]);
    if (outcome === "aborted") fail(provider, `the pull ran out of time (its deadline passed while waiting ${Math.round(ms / 1000)} s to ask again)`);
  } finally {
    if (onAbort) signal.removeEventListener("abort", onAbort);
  }
}

/**
 * The default fetch of a pull: a GET over node:http(s) whose connection looks its host up through
 * the egress check (as webhooks' postChecked does), so the address connected to is the address
 * checked. Redirects are not followed (node:http never follows them).
 */
export function checkedFetch(policy: EgressPolicy): typeof fetch {
  return ((input: URL | string, init?: RequestInit) =>
    new Promise<Response>((resolve, reject) => {
      const url = new URL(String(input));
      let lookup: LookupFunction;
      try {
        // A lookup that fails is refused too: a pull has no save-time check behind it.
        lookup = checkedLookup(url, policy, { refuseUnresolved: true });
      } catch (error) {
        reject(error instanceof Error ? error : new Error(String(error)));
        return;
      }
      const headers: Record<string, string> = {};
      new Headers(init?.headers).forEach((value, key) => {
        headers[key] = value;
      });
      const send = url.protocol === "https:" ? httpsRequest : httpRequest;
      // A connection of its own (no pooled socket another policy opened), looked up through the check.
      const req = send(url, { method: "GET", headers, lookup, agent: false, ...(init?.signal ? { signal: init.signal } : {}) }, (res: IncomingMessage) => {
        const status = res.statusCode ?? 502;
        const responseHeaders = new Headers();
        for (const [key, value] of Object.entries(res.headers)) {
          if (value === undefined) continue;
          for (const v of Array.isArray(value) ? value : [value]) responseHeaders.append(key, v);
        }
        const noBody = status === 204 || status === 205 || status === 304;
        if (noBody) res.resume();
        try {
          resolve(
            new Response(noBody ? null : (Readable.toWeb(res) as ReadableStream<Uint8Array>), {
              status: status < 200 || status > 599 ? 502 : status,
              statusText: res.statusMessage ?? "",
              headers: responseHeaders,
            }),
          );
        } catch (error) {
          res.destroy();
          reject(error instanceof Error ? error : new Error(String(error)));
        }
      });
      req.on("error", reject);
      req.end();
    })) as unknown as typeof fetch;
}

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

// OpenAI and Anthropic: {"error": {"message"}}; Twilio: {"code", "message"}; SendGrid: {"errors":
// [{"field", "message"}]}; Postmark: {"ErrorCode", "Message"}.
const ProviderErrorBody = z.union([
  z.object({ error: z.object({ message: z.string() }) }).transform((b) => b.error.message),
  z.object({ message: z.string() }).transform((b) => b.message),
  z.object({ errors: z.array(z.object({ message: z.string() })).min(1) }).transform((b) => b.errors.map((e) => e.message).join("; ")),
  z.object({ Message: z.string() }).transform((b) => b.Message),
]);

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
  // Checked before the first request (a refused host fails at once, not after the retries), and
  // again at connect time by checkedFetch.
  if (!isAllowed(hostOf(url), opts.egress)) {
    try {
      await resolveChecked(hostOf(url), opts.egress, { refuseUnresolved: true });
    } catch (error) {
      return fail(opts.provider, `refused to reach ${url.host}: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  const fetchImpl = opts.fetchImpl ?? checkedFetch(opts.egress);
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
        signal: opts.signal
          ? AbortSignal.any([opts.signal, AbortSignal.timeout(opts.timeoutMs ?? DEFAULT_TIMEOUT_MS)])
          : AbortSignal.timeout(opts.timeoutMs ?? DEFAULT_TIMEOUT_MS),
      });
    } catch (error) {
      if (opts.signal?.aborted) return fail(opts.provider, `${where(url)}: the pull ran out of time (its deadline passed)`);
      // Refused at connect time: the address is inside the network; trying again changes nothing.
      if (error instanceof EgressRefused) return fail(opts.provider, `refused to reach ${url.host}: ${error.message}`);
      const why =
        error instanceof Error
          ? error.name === "TimeoutError"
            ? "timed out"
            : `${error.message}${error.cause instanceof Error ? ` (${error.cause.message})` : ""}`
          : String(error);
      if (attempt < MAX_ATTEMPTS) {
        await pause(sleep, Math.min(cap, BACKOFF_MS[attempt - 1] ?? cap), opts.signal, opts.provider);
        continue;
      }
      return fail(opts.provider, `${where(url)} could not be reached after ${attempt} attempts: ${hide(why, secrets)}`);
    }
    if (response.ok) {
      const text = await boundedText(response, MAX_BODY_BYTES).catch((error: unknown) =>
        fail(
          opts.provider,
          opts.signal?.aborted
            ? `${where(url)}: the pull ran out of time (its deadline passed)`
            : `${where(url)}: the answer broke off: ${hide(error instanceof Error ? error.message : String(error), secrets)}`,
        ),
      );
      if (text === null) return fail(opts.provider, `${where(url)} answered more than ${MAX_BODY_BYTES / 1024 / 1024} MB`);
      return text;
    }
    const body = (await boundedText(response, 64 * 1024).catch(() => "")) ?? "";
    const retryable = response.status === 429 || response.status >= 500;
    if (retryable && attempt < MAX_ATTEMPTS) {
      const asked = response.status === 429 ? retryAfterMs(response.headers.get("retry-after")) : null;
      await pause(sleep, Math.min(cap, asked ?? BACKOFF_MS[attempt - 1] ?? cap), opts.signal, opts.provider);
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
