import { InputError } from "@/lib/errors";
import type { Db } from "@/db/client";
import { changeRequests, type ChangeRequest } from "@/db/schema";
import { formatCount } from "@/lib/format";
import { ChangeControlError } from "@/lib/control/errors";
import { kindHandlers } from "./kinds";
import type { Prepared } from "./prepared";
import { type ChangeKind, isChangeKind, REQUEST_TTL_MS, type RequestChangeParams } from "./types";
import type { Verified } from "./who";
import { MAX_END_SECONDS } from "@/lib/control/ends";

// What asking and breaking glass share: the kind's reading of what is in force, and the checks
// before anything is written (a raise, its end, the 5x confirmation).

export type Ask = { kind: ChangeKind; prepared: Prepared; endsAfterSeconds: number | null; endsAt: Date | null };

function checkEnd(p: Pick<RequestChangeParams, "endsAfterSeconds" | "endsAt">, now: Date): { endsAfterSeconds: number | null; endsAt: Date | null } {
  const after = p.endsAfterSeconds ?? null;
  const at = p.endsAt ?? null;
  if (after !== null && at !== null) throw InputError.of("give the raise one end: a duration (for 2 hours) or a time (until 18:00 UTC), not both");
  if (after !== null && (!Number.isInteger(after) || after <= 0 || after > MAX_END_SECONDS)) {
    throw InputError.of(`the raise's duration must be a whole number of seconds from 1 to ${formatCount(MAX_END_SECONDS)} (31 days)`);
  }
  if (at !== null) {
    if (!(at instanceof Date) || Number.isNaN(at.getTime())) throw InputError.of("the raise's end must be a time");
    if (at.getTime() <= now.getTime()) throw InputError.of(`the raise's end (${at.toISOString()}) is in the past: an end must be in the future`);
    if (at.getTime() - now.getTime() > MAX_END_SECONDS * 1000) throw InputError.of("the raise's end must be within 31 days");
  }
  return { endsAfterSeconds: after, endsAt: at };
}

export async function prepareAsk(db: Db, p: RequestChangeParams, now: Date): Promise<Ask> {
  if (!isChangeKind(p.kind)) throw InputError.of(`'${String(p.kind).slice(0, 40)}' is not a kind of change request`);
  if (typeof p.change !== "object" || p.change === null || Array.isArray(p.change)) throw InputError.of("the change must be an object");
  const end = checkEnd(p, now);
  const prepared = await kindHandlers[p.kind].prepare(db, p.change);
  if (!prepared.raise) {
    throw new ChangeControlError("not_a_raise", `${prepared.summary} is not a raise: lowering, a kill or a restore needs no second person, apply it directly`);
  }
  if ((end.endsAfterSeconds !== null || end.endsAt !== null) && !prepared.mayEnd) {
    throw InputError.of("only a raise of a ceiling's or a budget's value may carry an end");
  }
  if ((end.endsAfterSeconds !== null || end.endsAt !== null) && prepared.endRefused) {
    throw InputError.of(`${prepared.summary}: ${prepared.endRefused}`);
  }
  if (prepared.confirm && !prepared.confirm.matches(p.confirm ?? "")) {
    throw new ChangeControlError("confirmation_required", `${prepared.summary} is 5× or more: type ${prepared.confirm.expected} again to confirm`);
  }
  return { kind: p.kind, prepared, ...end };
}

/** The request's row; a break-glass one is written already applied, with no second person. */
export async function insertRequest(tx: Db, ask: Ask, who: Verified, reason: string, now: Date, breakGlass: boolean): Promise<ChangeRequest> {
  const { prepared } = ask;
  const [row] = await tx
    .insert(changeRequests)
    .values({
      kind: ask.kind,
      endpointId: prepared.endpointId,
      ceilingId: prepared.ceilingId,
      budgetId: prepared.budgetId,
      change: prepared.change,
      before: prepared.before,
      after: prepared.after,
      summary: prepared.summary,
      worstCaseBefore: prepared.worstBefore?.units ?? null,
      worstCaseAfter: prepared.worstAfter?.units ?? null,
      worstMoneyBefore: prepared.worstBefore?.micros ?? null,
      worstMoneyAfter: prepared.worstAfter?.micros ?? null,
      currency: prepared.currency,
      endsAfterSeconds: ask.endsAfterSeconds,
      endsAt: ask.endsAt,
      reason,
      requestedById: who.staffId,
      requestedBy: who.email,
      requestedVia: who.via,
      requestedAt: now,
      expiresAt: new Date(now.getTime() + REQUEST_TTL_MS),
      state: breakGlass ? "applied" : "pending",
      breakGlass,
      ...(breakGlass ? { decidedAt: now } : {}),
    })
    .returning();
  if (!row) throw new Error("change request insert returned nothing");
  return row;
}
