import { InputError } from "@/lib/errors";
import type { Db } from "@/db/client";
import { parseMoneyInput, parseLimitInput } from "@/lib/limits/parse";
import type { BudgetSpecInput } from "@/lib/budgets/spec";
import type { CeilingSpecInput } from "@/lib/catalog/spec";
import type { EndpointPart } from "@/lib/vocabulary";
import { parsePlanValue } from "@/lib/plans/preview";
import { breakGlass } from "./break-glass";

import { requestChange } from "./request";
import type { ChangeKind, Requester } from "./types";

// The dashboard's ask (and break glass) from the edit forms, which send a value as typed: it is
// read by the same rules as the direct edit (whole units; money as "1.50"), then lib/changes
// clamps it, decides it is a raise and keeps the 5x retype (`confirm`) on top of the approval.

export type AskChange =
  | { kind: "ceiling.value"; ceilingId: number; input: string; confirm?: string }
  | { kind: "ceiling.bounds"; ceilingId: number; min: string; max: string }
  | { kind: "budget.value"; budgetKey: string; input: string; confirm?: string }
  | { kind: "endpoint.per_call_max"; endpointKey: string; perCallMax: number; confirm?: string }
  | { kind: "endpoint.unarchive"; endpointKey: string }
  | { kind: "budget.unarchive"; budgetKey: string }
  | { kind: "ceiling.add"; endpointKey: string; ceiling: CeilingSpecInput; confirm?: string }
  // A plan's value as typed on the plan page (money for a budget); no input: remove the plan's value.
  | { kind: "plan.value"; planKey: string; target: { ceilingId: number } | { budgetKey: string }; input: string | null; confirm?: string }
  | { kind: "plan.default"; planKey: string }
  | { kind: "plan.key_assignable"; planKey: string }
  | { kind: "account.plan"; account: string; plan: string }
  | { kind: "account.unblock"; account: string }
  // An override as typed on the endpoint's or the budget's page (money for a budget).
  // (expiresAfterSeconds: it ends by itself that long after it is applied).
  | { kind: "ceiling.override"; ceilingId: number; caller: string; input: string; expiresAfterSeconds?: number | null }
  | { kind: "budget.override"; budgetKey: string; caller: string; input: string; expiresAfterSeconds?: number | null }
  | { kind: "budget.create"; spec: BudgetSpecInput }
  | { kind: "budget.members"; budgetKey: string; members: string[] }
  | { kind: "budget.archive"; budgetKey: string }
  | { kind: "endpoint.prices"; endpointKey: string; parts: EndpointPart[] }
  | { kind: "endpoint.billing_day"; endpointKey: string; billingDay: number };

export type AskParams = {
  ask: AskChange;
  requester: Requester;
  reason: string;
  endsAfterSeconds?: number;
  endsAt?: Date;
  /** Applies at once, alone, as break glass (admins; lib/changes/break-glass.ts checks it). */
  breakGlass?: boolean;
  now?: Date;
};

function typed<T>(parsed: { ok: true; value: T } | { ok: false; error: string }): T {
  if (!parsed.ok) throw InputError.of(parsed.error);
  return parsed.value;
}

/** The kind and change as lib/changes takes them, from what the form sent. */
const overrideEnd = (seconds: number | null | undefined) => (seconds ? { expiresAfterSeconds: seconds } : {});

function changeOf(ask: AskChange): { kind: ChangeKind; change: Record<string, unknown>; confirm?: string } {
  switch (ask.kind) {
    case "ceiling.value":
      return { kind: ask.kind, change: { ceilingId: ask.ceilingId, value: typed(parseLimitInput(ask.input, "value")) }, confirm: ask.confirm };
    case "ceiling.bounds":
      return { kind: ask.kind, change: { ceilingId: ask.ceilingId, min: typed(parseLimitInput(ask.min, "min")), max: typed(parseLimitInput(ask.max, "max")) } };
    case "budget.value": {
      const money = parseMoneyInput(ask.input, "value");
      return { kind: ask.kind, change: { budgetKey: ask.budgetKey, value: typed(money.ok ? { ok: true, value: money.micros } : money) }, confirm: ask.confirm };
    }
    case "endpoint.per_call_max":
      return { kind: ask.kind, change: { endpointKey: ask.endpointKey, perCallMax: ask.perCallMax }, confirm: ask.confirm };
    case "endpoint.unarchive":
      return { kind: ask.kind, change: { endpointKey: ask.endpointKey } };
    case "budget.unarchive":
      return { kind: ask.kind, change: { budgetKey: ask.budgetKey } };
    case "ceiling.add":
      return { kind: ask.kind, change: { endpointKey: ask.endpointKey, ceiling: ask.ceiling }, confirm: ask.confirm };
    case "plan.value": {
      // Money is read as the budget's own edit reads it ("1.50"): the currency only names it.
      const of = "ceilingId" in ask.target ? ({ kind: "count" } as const) : ({ kind: "money", currency: "" } as const);
      return {
        kind: ask.kind,
        change: { planKey: ask.planKey, ...ask.target, value: ask.input === null ? null : typed(parsePlanValue(ask.input, of)) },
        confirm: ask.confirm,
      };
    }
    case "plan.default":
    case "plan.key_assignable":
      return { kind: ask.kind, change: { planKey: ask.planKey } };
    case "account.plan":
      return { kind: ask.kind, change: { rows: [{ account: ask.account, plan: ask.plan }] } };
    case "account.unblock":
      return { kind: ask.kind, change: { account: ask.account } };
    case "ceiling.override":
      return {
        kind: ask.kind,
        change: { ceilingId: ask.ceilingId, caller: ask.caller, value: typed(parseLimitInput(ask.input, "value")), ...overrideEnd(ask.expiresAfterSeconds) },
      };
    case "budget.override": {
      const money = parseMoneyInput(ask.input, "value");
      return {
        kind: ask.kind,
        change: {
          budgetKey: ask.budgetKey,
          caller: ask.caller,
          value: typed(money.ok ? { ok: true, value: money.micros } : money),
          ...overrideEnd(ask.expiresAfterSeconds),
        },
      };
    }
    case "budget.create":
      return { kind: ask.kind, change: { spec: ask.spec } };
    case "budget.members":
      return { kind: ask.kind, change: { budgetKey: ask.budgetKey, members: ask.members } };
    case "budget.archive":
      return { kind: ask.kind, change: { budgetKey: ask.budgetKey } };
    case "endpoint.prices":
      return { kind: ask.kind, change: { endpointKey: ask.endpointKey, parts: ask.parts } };
    case "endpoint.billing_day":
      return { kind: ask.kind, change: { endpointKey: ask.endpointKey, billingDay: ask.billingDay } };
  }
}

export async function askForChange(db: Db, p: AskParams) {
  const { kind, change, confirm } = changeOf(p.ask);
  const params = { kind, change, confirm, requester: p.requester, reason: p.reason, endsAfterSeconds: p.endsAfterSeconds, endsAt: p.endsAt, now: p.now };
  return p.breakGlass ? breakGlass(db, params) : requestChange(db, params);
}
