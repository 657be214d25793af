import type { Db } from "@/db/client";
import { parseMoneyInput } from "@/lib/budgets/money";
import type { BudgetSpecInput } from "@/lib/budgets/spec";
import type { CeilingSpecInput } from "@/lib/catalog/spec";
import type { EndpointPart } from "@/lib/vocabulary";
import { parseLimitInput } from "@/lib/ceilings/parse";
import { breakGlass } from "./break-glass";
import { ChangeControlError } from "./errors";
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
  | { kind: "budget.create"; spec: BudgetSpecInput }
  | { kind: "budget.members"; budgetKey: string; members: string[] }
  | { kind: "budget.archive"; budgetKey: string }
  | { kind: "endpoint.prices"; endpointKey: string; parts: EndpointPart[] };

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
  if (!parsed.ok) throw new ChangeControlError("invalid_input", parsed.error);
  return parsed.value;
}

/** The kind and change as lib/changes takes them, from what the form sent. */
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
    case "budget.create":
      return { kind: ask.kind, change: { spec: ask.spec } };
    case "budget.members":
      return { kind: ask.kind, change: { budgetKey: ask.budgetKey, members: ask.members } };
    case "budget.archive":
      return { kind: ask.kind, change: { budgetKey: ask.budgetKey } };
    case "endpoint.prices":
      return { kind: ask.kind, change: { endpointKey: ask.endpointKey, parts: ask.parts } };
  }
}

export async function askForChange(db: Db, p: AskParams) {
  const { kind, change, confirm } = changeOf(p.ask);
  const params = { kind, change, confirm, requester: p.requester, reason: p.reason, endsAfterSeconds: p.endsAfterSeconds, endsAt: p.endsAt, now: p.now };
  return p.breakGlass ? breakGlass(db, params) : requestChange(db, params);
}
