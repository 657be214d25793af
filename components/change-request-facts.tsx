import Link from "next/link";
import type { ReactNode } from "react";
import { Money } from "@/components/money";
import type { ChangeRequest } from "@/db/schema";
import { changeKindLabels } from "@/lib/changes/types";
import { formatAge, formatCount, formatUtc } from "@/lib/format";

// What a change request asks, in the words an approver needs at 3am: what moves, from what to
// what, what the worst case becomes in units and money, who asked, why, and how long it has left.
// Shared by the requests list, a request's page and the overview.

export type RequestState = ChangeRequest["state"];

/** Labels by kind (lib/changes); a kind this dashboard does not know yet shows as it is stored. */
export const kindLabels: Record<string, string> = changeKindLabels;

export const stateLabels: Record<RequestState, string> = {
  pending: "Pending",
  applied: "Applied",
  rejected: "Rejected",
  stale: "Stale",
  expired: "Expired",
  cancelled: "Cancelled",
};

/** The state as a person reads it; an applied break glass is named as such, it is what staff look for. */
export function requestStateLabel(r: Pick<ChangeRequest, "state" | "breakGlass">): string {
  return r.breakGlass ? "Break glass" : stateLabels[r.state];
}

const stateTone: Record<RequestState, string> = {
  pending: "bg-amber-100 text-amber-900 dark:bg-amber-950 dark:text-amber-200",
  applied: "bg-emerald-100 text-emerald-900 dark:bg-emerald-950 dark:text-emerald-200",
  rejected: "bg-zinc-200 text-zinc-800 dark:bg-zinc-800 dark:text-zinc-200",
  stale: "bg-orange-100 text-orange-900 dark:bg-orange-950 dark:text-orange-200",
  expired: "bg-zinc-200 text-zinc-800 dark:bg-zinc-800 dark:text-zinc-200",
  cancelled: "bg-zinc-200 text-zinc-800 dark:bg-zinc-800 dark:text-zinc-200",
};

export function RequestStateBadge({ request }: { request: Pick<ChangeRequest, "state" | "breakGlass"> }) {
  const tone = request.breakGlass ? "bg-red-100 text-red-900 dark:bg-red-950 dark:text-red-200" : stateTone[request.state];
  return (
    <span
      className={`rounded-full px-2 py-0.5 text-xs font-medium ${tone}`}
      data-testid="request-state"
      data-state={request.breakGlass ? "break_glass" : request.state}
    >
      {requestStateLabel(request)}
    </span>
  );
}

const MONEY_FIELDS = new Set(["value", "min", "max", "valueBeforeKill"]);

/** A field's value as it reads: money for a budget's amounts, counts for numbers, words otherwise. */
function shownValue(kind: string, field: string, value: unknown, currency: string): ReactNode {
  if (value === null || value === undefined) return "none";
  if (typeof value === "number")
    return kind.startsWith("budget.") && MONEY_FIELDS.has(field) ? <Money micros={value} currency={currency} /> : formatCount(value);
  if (typeof value === "boolean") return field === "archived" ? (value ? "archived" : "in service") : String(value);
  if (typeof value === "string") return value;
  if (Array.isArray(value)) return value.length === 0 ? "none" : value.map((v) => (typeof v === "string" ? v : JSON.stringify(v))).join(", ");
  return JSON.stringify(value);
}

export type FieldChange = { field: string; before: ReactNode; after: ReactNode };

/** Each field the request moves, before → after; fields the approval does not change are left out. */
export function describeChange(r: Pick<ChangeRequest, "kind" | "before" | "after" | "currency">): FieldChange[] {
  const currency = r.currency ?? "USD";
  const fields = Object.keys(r.after).filter((f) => f !== "valueBeforeKill" || r.after[f] !== r.before[f]);
  return fields
    .filter((f) => JSON.stringify(r.before[f]) !== JSON.stringify(r.after[f]))
    .map((field) => ({ field, before: shownValue(r.kind, field, r.before[field], currency), after: shownValue(r.kind, field, r.after[field], currency) }));
}

/** "1,000 → 10,000 a day" in units and "$10.00 → $100.00" in money, each only when known. */
export function worstCaseLines(r: Pick<ChangeRequest, "worstCaseBefore" | "worstCaseAfter" | "worstMoneyBefore" | "worstMoneyAfter" | "currency">): {
  units: string | null;
  money: ReactNode;
} {
  const count = (v: number | null) => (v === null ? "unknown" : formatCount(v));
  const money = (v: number | null) => (v === null ? "unknown" : <Money micros={v} currency={r.currency ?? "USD"} />);
  return {
    units: r.worstCaseBefore === null && r.worstCaseAfter === null ? null : `${count(r.worstCaseBefore)} → ${count(r.worstCaseAfter)}`,
    money:
      r.worstMoneyBefore === null && r.worstMoneyAfter === null ? null : (
        <>
          {money(r.worstMoneyBefore)} → {money(r.worstMoneyAfter)}
        </>
      ),
  };
}

/** How long a temporary raise lasts, as asked: "for 2 h after it is applied" or "until Mar 5, 18:00 UTC". */
export function raiseEndText(r: Pick<ChangeRequest, "endsAfterSeconds" | "endsAt">): string | null {
  if (r.endsAt) return `until ${formatUtc(r.endsAt)}`;
  if (r.endsAfterSeconds) return `for ${formatAge(r.endsAfterSeconds)} after it is applied`;
  return null;
}

/** "asked 12 min ago, expires in 23 h" for a pending request; when it was decided otherwise. */
export function timingText(r: Pick<ChangeRequest, "state" | "requestedAt" | "expiresAt" | "decidedAt">, now: Date): string {
  const seconds = (a: Date, b: Date) => Math.max(0, Math.round((b.getTime() - a.getTime()) / 1000));
  const asked = `asked ${formatAge(seconds(r.requestedAt, now))} ago`;
  if (r.state === "pending") {
    return r.expiresAt > now ? `${asked}, expires in ${formatAge(seconds(now, r.expiresAt))}` : `${asked}, expired (not yet marked)`;
  }
  if (r.state === "expired") return `${asked}, expired ${formatUtc(r.expiresAt)}`;
  return r.decidedAt ? `${asked}, decided ${formatUtc(r.decidedAt)}` : asked;
}

/** Every fact of one request as a definition list; `link` makes its summary a link to its page. */
/** What a request touches, to link to, when the read joined it (lib/changes ChangeRequestView). */
type Touches = { endpointKey?: string | null; budgetKey?: string | null };

export function ChangeRequestFacts({ request: r, now, link = false }: { request: ChangeRequest & Touches; now: Date; link?: boolean }) {
  const changes = describeChange(r);
  const worst = worstCaseLines(r);
  const end = raiseEndText(r);
  return (
    <div className="space-y-2 text-sm">
      <div className="flex flex-wrap items-center gap-2">
        <RequestStateBadge request={r} />
        <span className="text-xs font-medium uppercase tracking-wide text-zinc-600 dark:text-zinc-400">{kindLabels[r.kind] ?? r.kind}</span>
        {link ? (
          <Link href={`/changes/${r.id}`} className="font-medium underline underline-offset-2" data-testid="request-link">
            #{r.id} {r.summary}
          </Link>
        ) : (
          <span className="font-medium">
            #{r.id} {r.summary}
          </span>
        )}
      </div>
      <dl className="grid gap-x-6 gap-y-1 sm:grid-cols-[max-content_1fr]">
        {r.endpointKey || r.budgetKey ? (
          <>
            <dt className="text-zinc-600 dark:text-zinc-400">On</dt>
            <dd className="break-all">
              {r.endpointKey ? (
                <Link href={`/endpoints/${encodeURIComponent(r.endpointKey)}`} className="font-mono underline underline-offset-2">
                  {r.endpointKey}
                </Link>
              ) : r.budgetKey ? (
                <Link href={`/budgets/${encodeURIComponent(r.budgetKey)}`} className="font-mono underline underline-offset-2">
                  budget {r.budgetKey}
                </Link>
              ) : null}
            </dd>
          </>
        ) : null}
        {changes.map((c) => (
          <div key={c.field} className="contents">
            <dt className="text-zinc-600 dark:text-zinc-400">{c.field}</dt>
            <dd className="tabular-nums" data-testid="request-change">
              {c.before} → {c.after}
            </dd>
          </div>
        ))}
        {worst.units ? (
          <>
            <dt className="text-zinc-600 dark:text-zinc-400">Worst case (units)</dt>
            <dd className="tabular-nums" data-testid="request-worst-units">
              {worst.units}
            </dd>
          </>
        ) : null}
        {worst.money ? (
          <>
            <dt className="text-zinc-600 dark:text-zinc-400">Worst case (money)</dt>
            <dd className="tabular-nums" data-testid="request-worst-money">
              {worst.money}
            </dd>
          </>
        ) : null}
        <dt className="text-zinc-600 dark:text-zinc-400">Asked by</dt>
        <dd className="break-all">
          {r.requestedBy}
          {r.requestedVia === "cli" ? " (command line)" : ""}
        </dd>
        <dt className="text-zinc-600 dark:text-zinc-400">Reason</dt>
        <dd className="break-words">{r.reason}</dd>
        <dt className="text-zinc-600 dark:text-zinc-400">When</dt>
        <dd data-testid="request-timing">{timingText(r, now)}</dd>
        {end ? (
          <>
            <dt className="text-zinc-600 dark:text-zinc-400">Temporary</dt>
            <dd data-testid="request-end">{end}; then the value from before is put back</dd>
          </>
        ) : null}
        {r.decidedBy || (r.state !== "pending" && r.decisionNote) ? (
          <>
            <dt className="text-zinc-600 dark:text-zinc-400">Decided by</dt>
            <dd className="break-words">
              {r.decidedBy ?? "nobody"}
              {r.decisionNote ? `: ${r.decisionNote}` : ""}
            </dd>
          </>
        ) : null}
        {r.breakGlass ? (
          <>
            <dt className="text-zinc-600 dark:text-zinc-400">Acknowledged</dt>
            <dd data-testid="request-acknowledged">
              {r.acknowledgedBy
                ? `by ${r.acknowledgedBy}${r.acknowledgedAt ? ` ${formatUtc(r.acknowledgedAt)}` : ""}`
                : "not yet: another admin must acknowledge it"}
            </dd>
          </>
        ) : null}
      </dl>
    </div>
  );
}
