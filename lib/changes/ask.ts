import { eq } from "drizzle-orm";
import type { Db } from "@/db/client";
import { budgets, ceilings } from "@/db/schema";
import { parseMoneyInput, previewBudgetAdjustment } from "@/lib/budgets/money";
import type { CeilingSpecInput } from "@/lib/catalog/spec";
import { CeilingError } from "@/lib/ceilings/errors";
import { parseLimitInput, previewAdjustment } from "@/lib/ceilings/parse";
import { formatCount, formatMoney } from "@/lib/format";
import { breakGlass } from "./break-glass";
import { requestChange } from "./request";
import type { Requester } from "./types";

// The dashboard's ask (and break glass) from the edit forms, which send a value as typed: the
// value is read and clamped exactly as the direct edit would, and the 5x retype is kept on top of
// the approval, so asking never skips a check that saving it alone would have made.

export type AskChange =
  | { kind: "ceiling.value"; ceilingId: number; input: string; confirm?: string }
  | { kind: "budget.value"; budgetKey: string; input: string; confirm?: string }
  | { kind: "endpoint.per_call_max"; endpointKey: string; perCallMax: number }
  | { kind: "endpoint.unarchive"; endpointKey: string }
  | { kind: "budget.unarchive"; budgetKey: string }
  | { kind: "ceiling.add"; endpointKey: string; ceiling: CeilingSpecInput };

export type AskParams = {
  ask: AskChange;
  requester: Requester;
  reason: string;
  endsAfterSeconds?: number;
  endsAt?: Date;
  /** Applies at once, alone, as break glass (admins; lib/changes/break-glass.ts checks it again). */
  breakGlass?: boolean;
  now?: Date;
};

type Preview = { ok: false; error: string } | { ok: true; typed: number; applied: number; needsConfirmation: boolean; message: string };

function requireConfirmation(preview: Preview, confirm: string | undefined, parse: (raw: string) => number | null, show: (v: number) => string): number {
  if (!preview.ok) throw new CeilingError("invalid_input", preview.error);
  if (preview.needsConfirmation && parse(confirm ?? "") !== preview.typed) {
    throw new CeilingError("confirmation_required", `${preview.message}. The confirmation must be exactly ${show(preview.typed)}`);
  }
  return preview.applied;
}

/** The change as lib/changes takes it, from what the form sent. */
async function changeOf(db: Db, ask: AskChange): Promise<Record<string, unknown>> {
  switch (ask.kind) {
    case "ceiling.value": {
      const [c] = await db.select().from(ceilings).where(eq(ceilings.id, ask.ceilingId));
      if (!c) throw new CeilingError("not_found", `ceiling ${ask.ceilingId} does not exist`);
      const preview = previewAdjustment({ raw: ask.input, current: c.value, valueBeforeKill: c.valueBeforeKill, min: c.minValue, max: c.maxValue });
      const parse = (raw: string) => {
        const p = parseLimitInput(raw);
        return p.ok ? p.value : null;
      };
      return { ceilingId: c.id, value: requireConfirmation(preview, ask.confirm, parse, formatCount) };
    }
    case "budget.value": {
      const [b] = await db.select().from(budgets).where(eq(budgets.key, ask.budgetKey));
      if (!b) throw new CeilingError("not_found", `budget ${ask.budgetKey} does not exist`);
      const preview = previewBudgetAdjustment({ raw: ask.input, current: b.value, valueBeforeKill: b.valueBeforeKill, min: b.minValue, max: b.maxValue, currency: b.currency });
      const parse = (raw: string) => {
        const p = parseMoneyInput(raw);
        return p.ok ? p.micros : null;
      };
      return { budgetKey: b.key, value: requireConfirmation(preview, ask.confirm, parse, (v) => formatMoney(v, b.currency)) };
    }
    case "endpoint.per_call_max":
      return { endpointKey: ask.endpointKey, perCallMax: ask.perCallMax };
    case "endpoint.unarchive":
      return { endpointKey: ask.endpointKey };
    case "budget.unarchive":
      return { budgetKey: ask.budgetKey };
    case "ceiling.add":
      return { endpointKey: ask.endpointKey, ceiling: ask.ceiling };
  }
}

export async function askForChange(db: Db, p: AskParams) {
  const change = await changeOf(db, p.ask);
  const params = { kind: p.ask.kind, change, requester: p.requester, reason: p.reason, endsAfterSeconds: p.endsAfterSeconds, endsAt: p.endsAt, now: p.now };
  return p.breakGlass ? breakGlass(db, params) : requestChange(db, params);
}
