"use server";

import { liveActionDeps } from "@/app/_lib/action-deps";
import type { ActionState } from "@/app/_lib/action-state";
import { type ActionCore, isActionCore } from "@/app/_lib/define-action";
import * as accounts from "./accounts/account-action-core";
import * as alerts from "./alerts/alert-action-core";
import * as apiKeys from "./api-keys/api-key-action-core";
import * as budgets from "./budgets/budget-action-core";
import * as changes from "./changes/change-action-core";
import * as control from "./control-action-core";
import * as ceiling from "./endpoints/[key]/ceiling-action-core";
import * as catalog from "./endpoints/catalog-action-core";
import * as plans from "./plans/plan-action-core";
import * as sources from "./reconciliation/sources/source-action-core";
import * as providerCap from "./endpoints/[key]/provider-cap-action-core";
import * as schedules from "./endpoints/[key]/schedule-action-core";
import * as staff from "./staff/staff-action-core";
import * as tokens from "./tokens/token-action-core";
import * as whatIf from "./what-if-action-core";

// The dashboard's one server action. A form binds it to an action's name
// (`runAction.bind(null, "ceiling.kill")`); every action's own core does the rest, its role check
// first. A name that is not here (a forged request) is refused without touching anything.

type NameOf<Module> = { [K in keyof Module]: Module[K] extends ActionCore<infer Name> ? Name : never }[keyof Module];
type Modules =
  | typeof accounts
  | typeof alerts
  | typeof apiKeys
  | typeof budgets
  | typeof changes
  | typeof control
  | typeof ceiling
  | typeof catalog
  | typeof plans
  | typeof providerCap
  | typeof sources
  | typeof schedules
  | typeof staff
  | typeof tokens
  | typeof whatIf;
type Each<M> = M extends unknown ? NameOf<M> : never;
export type ActionName = Each<Modules>;

const CORES = new Map<string, ActionCore>();
for (const module of [accounts, alerts, apiKeys, budgets, changes, control, ceiling, catalog, plans, providerCap, sources, schedules, staff, tokens, whatIf]) {
  for (const core of Object.values(module).filter(isActionCore)) {
    if (CORES.has(core.boundary)) throw new Error(`two server actions are named ${core.boundary}`);
    CORES.set(core.boundary, core);
  }
}

export async function runAction(name: ActionName, _previous: ActionState, formData: FormData): Promise<ActionState> {
  const core = typeof name === "string" ? CORES.get(name) : undefined;
  if (!core) return { status: "error", error: "This action does not exist. Reload the page and try again.", code: "not_found" };
  return core(liveActionDeps, formData);
}
