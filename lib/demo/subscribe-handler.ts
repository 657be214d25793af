import { InputError } from "@/lib/errors";
import { randomUUID } from "node:crypto";
import type { Db } from "@/db/client";
import { clientAddress } from "@/lib/auth/client-address";
import { readJsonBody } from "@/lib/http/body";
import type { EmailProvider } from "./fake-provider";
import { type DeliveryOutcome, parseSubscribeBody, subscribe, SubscribeInputError, type SubscribeOutcome } from "./subscribe";
import { logError, logWarning } from "@/lib/log/redact";
import { apiError } from "@/lib/http/responses";

/** The one answer for every outcome that is not malformed input: it tells nobody whether an address is known. */
export const UNIFORM_BODY = JSON.stringify({
  status: "accepted",
  message: "If this address can receive mail, a confirmation is on its way.",
});
const UNIFORM_HEADERS = { "content-type": "application/json; charset=utf-8", "cache-control": "no-store" } as const;
const MAX_BODY_BYTES = 2048;

export type SubscribeLogEntry =
  | { event: "subscribe"; requestId: string; caller: string | null; outcome: SubscribeOutcome["kind"]; gate?: string; message?: string }
  | { event: "delivery"; requestId: string; outcome: DeliveryOutcome["kind"]; settledOrReleased: boolean; error?: string }
  | { event: "error"; requestId: string; message: string; error: unknown };

export type SubscribeHandlerDeps = {
  db: () => Promise<Db>;
  provider: EmailProvider;
  /** Every uniform answer takes at least this long, so the time taken does not tell outcomes apart. */
  minMs: number;
  /** Runs the send after the answer is sent (Next's `after`). */
  defer: (work: Promise<unknown>) => void;
  log: (entry: SubscribeLogEntry) => void;
  endpoint?: string;
};

/** POST /api/demo/subscribe: 400 for malformed input, otherwise the same 202 at the same moment. */
export async function handleSubscribe(request: Request, deps: SubscribeHandlerDeps): Promise<Response> {
  const started = performance.now();
  const requestId = randomUUID();

  const type = request.headers.get("content-type") ?? "";
  if (!/^application\/json\s*(;|$)/i.test(type)) return invalid("unsupported_media_type", "send the body as application/json");
  const body = await readJsonBody(request, MAX_BODY_BYTES);
  if (!body.ok) return invalid(body.code, body.message);
  let input;
  try {
    input = parseSubscribeBody(body.value);
  } catch (error) {
    if (error instanceof SubscribeInputError || error instanceof InputError) return invalid(error.code, error.message);
    throw error;
  }

  // The demo's caller only labels its own cooldowns (demo traffic sends one per simulated client),
  // so it reads the nearest X-Forwarded-For hop; no sign-in decision rests on it.
  const caller = clientAddress(Object.fromEntries(request.headers), 1);
  try {
    const outcome = await subscribe(await deps.db(), { email: input.email, caller: caller ? `ip:${caller}` : undefined, requestId }, deps);
    if (outcome.kind === "accepted") {
      deps.defer(
        outcome.delivery.then(
          (d) =>
            deps.log({
              event: "delivery",
              requestId,
              outcome: d.kind,
              settledOrReleased: d.kind === "delivered" ? d.settled : d.released,
              ...(d.kind === "provider_failed" ? { error: d.error } : {}),
            }),
          (error: unknown) => deps.log({ event: "error", requestId, message: "delivery failed", error }),
        ),
      );
      deps.log({ event: "subscribe", requestId, caller, outcome: "accepted" });
    } else if (outcome.kind === "refused") {
      deps.log({ event: "subscribe", requestId, caller, outcome: "refused", gate: outcome.gate, message: outcome.message });
    } else {
      deps.log({ event: "subscribe", requestId, caller, outcome: "failed", message: outcome.message });
    }
  } catch (error) {
    // Unexpected, so logged in full; the visitor still gets the uniform answer.
    deps.log({ event: "error", requestId, message: "subscribe failed", error });
  }

  const wait = deps.minMs - (performance.now() - started);
  if (wait > 0) await new Promise((resolve) => setTimeout(resolve, Math.ceil(wait)));
  return new Response(UNIFORM_BODY, { status: 202, headers: UNIFORM_HEADERS });
}

function invalid(code: string, message: string): Response {
  return apiError(400, code, message);
}

/** Refusals and failures go to stderr loudly; the database already holds every refusal. */
export function logToConsole(entry: SubscribeLogEntry): void {
  if (entry.event === "error") logError(`[demo.subscribe] ${entry.requestId} ${entry.message}`, entry.error);
  else if (entry.event === "subscribe" && entry.outcome !== "accepted") logWarning(`[demo.subscribe] ${JSON.stringify(entry)}`);
  else if (entry.event === "delivery" && entry.outcome !== "delivered") logWarning(`[demo.subscribe] ${JSON.stringify(entry)}`);
}
