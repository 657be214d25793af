import { z } from "zod";
import type { Db } from "@/db/client";
import { canonicalDestination, InvalidDestinationError } from "@/lib/canonical";
import { releaseReservation, reserve, ReservationInputError, settleReservation } from "@/lib/enforcement";
import type { Gate } from "@/lib/vocabulary";
import type { EmailProvider } from "./fake-provider";
import { DomainError, InputError } from "@/lib/errors";

// The demo service's subscribe flow, written the way a real service uses the library:
// free checks, then ONE reserve (kill switch, throttle, ceilings and the inbox cooldown together),
// then the send, then settle, or release when the provider failed.

export const SUBSCRIBE_ENDPOINT = "email.subscribe";

export const SubscribeBody = z.object({ email: z.string().max(320, "email must be at most 320 characters") }).strict();
export type SubscribeBody = z.infer<typeof SubscribeBody>;

export type SubscribeRequest = { email: string; caller?: string; requestId?: string };

/** What happened, for the log and for tests; the HTTP caller sees the same answer for all of them. */
export type SubscribeOutcome =
  | { kind: "accepted"; reservationId: string; delivery: Promise<DeliveryOutcome> }
  | { kind: "refused"; gate: Gate; message: string }
  | { kind: "failed"; message: string };

export type DeliveryOutcome = { kind: "delivered"; messageId: string; settled: boolean } | { kind: "provider_failed"; error: string; released: boolean };

export class SubscribeInputError extends DomainError<"invalid_email"> {
  override name = "SubscribeInputError";
}

/** The free checks: shape and a real email address. Throws SubscribeInputError, costs nothing. */
export function parseSubscribeBody(value: unknown): { email: string; key: string } {
  const parsed = SubscribeBody.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw InputError.of(`${issue?.path.join(".") || "body"}: ${issue?.message ?? "invalid"}`);
  }
  try {
    const c = canonicalDestination(parsed.data.email);
    if (c.kind !== "email") throw new SubscribeInputError("invalid_email", "email must be an email address");
    return { email: c.original, key: c.key };
  } catch (error) {
    if (error instanceof InvalidDestinationError) throw new SubscribeInputError("invalid_email", error.message);
    throw error;
  }
}

/**
 * Reserves one confirmation email for the inbox and, when granted, returns the send as a promise
 * the caller runs after answering, so the answer never waits on the provider.
 */
export async function subscribe(db: Db, request: SubscribeRequest, deps: { provider: EmailProvider; endpoint?: string }): Promise<SubscribeOutcome> {
  let decision;
  try {
    decision = await reserve(db, {
      endpoint: deps.endpoint ?? SUBSCRIBE_ENDPOINT,
      amount: 1,
      caller: request.caller,
      destination: request.email,
      requestId: request.requestId,
      // The send takes seconds at worst; a reservation left behind by a crash expires as spent.
      ttlSeconds: 120,
    });
  } catch (error) {
    // Input was checked already, so this is the service's configuration (unknown endpoint, a
    // per-caller ceiling without a caller): an operator must see it, the visitor must not.
    if (error instanceof ReservationInputError) return { kind: "failed", message: `${error.code}: ${error.message}` };
    throw error;
  }
  if (decision.status === "refused") return { kind: "refused", gate: decision.gate, message: decision.message };
  // No idempotency key is sent, so no earlier reservation can come back; were one to, it is no grant.
  if (decision.status === "resolved") return { kind: "failed", message: `resolved: ${decision.message}` };
  const reservationId = decision.reservationId;
  const delivery = deliver(db, deps.provider, reservationId, request.email);
  return { kind: "accepted", reservationId, delivery };
}

async function deliver(db: Db, provider: EmailProvider, reservationId: string, to: string): Promise<DeliveryOutcome> {
  let result;
  try {
    result = await provider.send({
      to,
      subject: "Confirm your subscription",
      text: "Follow the link in this message to confirm your subscription. If you did not ask for it, ignore this email.",
    });
  } catch (error) {
    result = { ok: false as const, error: error instanceof Error ? error.message : String(error) };
  }
  if (result.ok) {
    const settled = await settleReservation(db, { reservationId, actual: 1 });
    return { kind: "delivered", messageId: result.messageId, settled: settled.status === "settled" };
  }
  // Nothing was sent: give the budget and the inbox's cooldown back, so a retry is not refused
  // for a message that never arrived.
  const released = await releaseReservation(db, { reservationId });
  return { kind: "provider_failed", error: result.error, released: released.status === "released" };
}
