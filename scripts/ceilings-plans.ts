// `npm run ceilings -- plans ...`: the plans from the command line, through the same lib/plans
// verbs as the dashboard (same rules, same audit events, actor the operating-system user); a raise
// is asked as the owner of the personal token in CEILINGS_STAFF_TOKEN (scripts/ceilings-ask.ts).
import { parseArgs } from "node:util";
import { eq } from "drizzle-orm";
import type { Db } from "@/db/client";
import { ceilings, endpoints } from "@/db/schema";
import type { AuditActor } from "@/lib/audit/record";
import { CatalogError } from "@/lib/limits/errors";
import { formatCount, formatMoney } from "@/lib/format";
import {
  createPlan,
  deletePlan,
  listPlans,
  readPlan,
  removePlanValue,
  setDefaultPlan,
  setPlanKeyAssignable,
  setPlanValue,
  updatePlan,
  type PlanTarget,
} from "@/lib/plans";
import { askOnRaise } from "./ceilings-ask";
import { type Credential, credentialOf } from "./ceilings-changes";

export const PLANS_USAGE = `  plans                                every plan, its accounts, the default marked
  plans show <plan>                    the plan's value beside every per-caller ceiling and
                                       per-account budget, with their own values and bounds
  plans create <plan> --name "Pro" [--description "…"] --reason "why"
  plans update <plan> [--name "…"] [--description "…"] --reason "why"
  plans set <plan> (--ceiling <endpoint>/<metric>/<window> | --budget <budget>) <value>
            [--confirm <value>] --reason "why"
                                       the plan's value there: a whole number on a ceiling,
                                       money ("12.50") on a budget; 0 refuses the plan's accounts;
                                       a raise to 5x or more of what binds now needs --confirm;
                                       above what binds now it is a raise: asked for as the owner
                                       of CEILINGS_STAFF_TOKEN (a change request a second admin
                                       approves), else refused; a bare --as is refused
  plans unset <plan> (--ceiling … | --budget …) [--confirm <own value>] --reason "why"
                                       the ceiling's or budget's own value binds again (a raise
                                       when the own value is higher: asked, by the token)
  plans default <plan> --reason "why"  every account not assigned a plan is on it (to a looser
                                       plan: a raise, asked, by the token)
  plans key-assignable <plan> (--on | --off) --reason "why"
                                       whether API keys may move accounts onto it even when that
                                       loosens them: --on is asked of a second admin (by the
                                       token), --off at once
  plans delete <plan> --reason "why"   only a plan no account is on, and not the default`;

export class PlansUsageError extends Error {}

/** Where a value goes: a per-caller ceiling by endpoint, metric and window (or its id), or a budget. */
export type CliTarget = { ceiling: { endpoint: string; metric: string; window: string } } | { ceilingId: number } | { budgetKey: string };

export type PlansCommand =
  | { verb: "list" }
  | { verb: "show"; plan: string }
  | { verb: "create"; plan: string; name: string; description: string; reason: string }
  | { verb: "update"; plan: string; name?: string; description?: string; reason: string }
  | { verb: "set"; plan: string; target: CliTarget; value: string; confirm?: string; reason: string; who?: Credential }
  | { verb: "unset"; plan: string; target: CliTarget; confirm?: string; reason: string; who?: Credential }
  | { verb: "default"; plan: string; reason: string; who?: Credential }
  | { verb: "key-assignable"; plan: string; on: boolean; reason: string; who?: Credential }
  | { verb: "delete"; plan: string; reason: string };

function readTarget(values: { ceiling?: string; budget?: string }): CliTarget {
  if (values.ceiling !== undefined && values.budget !== undefined) throw new PlansUsageError("give --ceiling or --budget, not both");
  if (values.budget !== undefined) return { budgetKey: values.budget };
  if (values.ceiling === undefined)
    throw new PlansUsageError("say where: --ceiling <endpoint>/<metric>/<window> (e.g. email.send/units/utc_day) or --budget <budget>");
  if (/^\d+$/.test(values.ceiling)) return { ceilingId: Number(values.ceiling) };
  const [endpoint, metric, window, ...rest] = values.ceiling.split("/");
  if (!endpoint || !metric || !window || rest.length > 0)
    throw new PlansUsageError(`--ceiling must be <endpoint>/<metric>/<window> such as email.send/units/utc_day, got '${values.ceiling}'`);
  return { ceiling: { endpoint, metric, window } };
}

function readArgs(argv: string[]) {
  try {
    return parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        reason: { type: "string" },
        name: { type: "string" },
        description: { type: "string" },
        ceiling: { type: "string" },
        budget: { type: "string" },
        confirm: { type: "string" },
        as: { type: "string" },
        on: { type: "boolean" },
        off: { type: "boolean" },
      },
    });
  } catch (error) {
    // Node's own message ("Unknown option '--x'") is the one to show, without a stack.
    throw new PlansUsageError(error instanceof Error ? error.message : String(error));
  }
}

/** Reads `plans ...` (the words after `plans`); every mistake is a usage error naming it. */
export function parsePlansArgs(argv: string[], env: Readonly<Record<string, string | undefined>> = process.env): PlansCommand {
  const { positionals, values } = readArgs(argv);
  const [verb = "list", plan, ...rest] = positionals;
  const need = (what: string) => {
    if (!plan) throw new PlansUsageError(`plans ${verb} needs a plan`);
    if (what !== "value" && rest.length > 0) throw new PlansUsageError(`unexpected arguments: ${rest.join(" ")}`);
    return plan;
  };
  const reason = () => {
    if (!values.reason) throw new PlansUsageError(`plans ${verb} needs --reason "why" for the audit log`);
    return values.reason;
  };
  const allowed = (names: (keyof typeof values)[]) => {
    const extra = (Object.keys(values) as (keyof typeof values)[]).filter((k) => !names.includes(k));
    if (extra.length > 0) throw new PlansUsageError(`plans ${verb} takes no --${extra.join(", --")}`);
  };
  // A raise is asked as the owner of the personal token (--as alone is refused: a name is not a proof).
  const as = () => {
    const who = credentialOf(values.as, env, `plans ${verb} (asking for a raise)`);
    return who.token === undefined ? {} : { who };
  };
  switch (verb) {
    case "list":
      if (plan) throw new PlansUsageError("plans takes no argument; to see one: plans show <plan>");
      allowed([]);
      return { verb };
    case "show":
      allowed([]);
      return { verb, plan: need("plan") };
    case "create":
      allowed(["name", "description", "reason"]);
      if (values.name === undefined) throw new PlansUsageError('plans create needs --name "…"');
      return { verb, plan: need("plan"), name: values.name, description: values.description ?? "", reason: reason() };
    case "update":
      allowed(["name", "description", "reason"]);
      if (values.name === undefined && values.description === undefined) throw new PlansUsageError("plans update needs --name or --description");
      return {
        verb,
        plan: need("plan"),
        ...(values.name === undefined ? {} : { name: values.name }),
        ...(values.description === undefined ? {} : { description: values.description }),
        reason: reason(),
      };
    case "set": {
      allowed(["ceiling", "budget", "confirm", "reason", "as"]);
      const p = need("value");
      const [value, ...more] = rest;
      if (value === undefined) throw new PlansUsageError("plans set needs a value after the plan");
      if (more.length > 0) throw new PlansUsageError(`unexpected arguments: ${more.join(" ")}`);
      return {
        verb,
        plan: p,
        target: readTarget(values),
        value,
        ...(values.confirm === undefined ? {} : { confirm: values.confirm }),
        reason: reason(),
        ...as(),
      };
    }
    case "unset":
      allowed(["ceiling", "budget", "confirm", "reason", "as"]);
      return {
        verb,
        plan: need("plan"),
        target: readTarget(values),
        ...(values.confirm === undefined ? {} : { confirm: values.confirm }),
        reason: reason(),
        ...as(),
      };
    case "default":
      allowed(["reason", "as"]);
      return { verb, plan: need("plan"), reason: reason(), ...as() };
    case "key-assignable":
      allowed(["on", "off", "reason", "as"]);
      if (values.on === values.off) throw new PlansUsageError("plans key-assignable needs --on or --off, one of them");
      return { verb, plan: need("plan"), on: values.on === true, reason: reason(), ...as() };
    case "delete":
      allowed(["reason"]);
      return { verb, plan: need("plan"), reason: reason() };
    default:
      throw new PlansUsageError(`unknown plans command '${verb}'`);
  }
}

/** A ceiling named on the command line: the per-caller one of that metric and window (else any, so the verb can say why not). */
async function resolveTarget(db: Db, target: CliTarget): Promise<PlanTarget> {
  if (!("ceiling" in target)) return target;
  const { endpoint, metric, window } = target.ceiling;
  const rows = await db
    .select({ id: ceilings.id, scope: ceilings.scope, metric: ceilings.metric, window: ceilings.window })
    .from(ceilings)
    .innerJoin(endpoints, eq(endpoints.id, ceilings.endpointId))
    .where(eq(endpoints.key, endpoint));
  const matching = rows.filter((c) => c.metric === metric && c.window === window);
  const chosen = matching.find((c) => c.scope === "caller") ?? matching[0];
  if (!chosen) throw new CatalogError("not_found", `${endpoint} has no ceiling of ${metric} per ${window}${rows.length === 0 ? " (no such endpoint)" : ""}`);
  return { ceilingId: chosen.id };
}

export async function runPlans(db: Db, cmd: PlansCommand, actor: AuditActor, out: (line: string) => void = console.log): Promise<void> {
  switch (cmd.verb) {
    case "list": {
      for (const p of await listPlans(db))
        out(`${p.key}${p.isDefault ? "  (default)" : ""}  ${p.name}  ${p.approximate ? "about " : ""}${formatCount(p.accounts)} account(s)`);
      return;
    }
    case "show": {
      const d = await readPlan(db, cmd.plan);
      out(
        `${d.plan.key}  ${d.plan.name}${d.plan.isDefault ? "  (default: every account not assigned a plan)" : ""}  ${d.approximate ? "about " : ""}${formatCount(d.accounts)} account(s)  version ${d.plan.version}`,
      );
      if (d.plan.description) out(`  ${d.plan.description}`);
      for (const c of d.ceilings) {
        const plan = c.planValue === null ? "-" : formatCount(c.planValue);
        out(
          `  #${c.ceilingId} ${c.endpointKey}/${c.metric}/${c.window}  plan ${plan}  (ceiling ${formatCount(c.ceilingValue)}, bounds ${formatCount(c.min)}..${formatCount(c.max)})${c.archived ? "  [archived endpoint]" : ""}`,
        );
      }
      for (const b of d.budgets) {
        const money = (m: number) => formatMoney(m, b.currency);
        out(
          `  budget ${b.budgetKey}  plan ${b.planValue === null ? "-" : money(b.planValue)}  (budget ${money(b.budgetValue)}, bounds ${money(b.min)}..${money(b.max)})${b.archived ? "  [archived]" : ""}`,
        );
      }
      return;
    }
    case "create": {
      const p = await createPlan(db, { key: cmd.plan, name: cmd.name, description: cmd.description, actor, reason: cmd.reason });
      out(`created plan ${p.key}: it sets no values yet (npm run ceilings -- plans set ${p.key} ...)`);
      return;
    }
    case "update": {
      const { plan } = await readPlan(db, cmd.plan);
      const changes = await updatePlan(db, {
        planKey: plan.key,
        expectedVersion: plan.version,
        name: cmd.name ?? plan.name,
        description: cmd.description ?? plan.description,
        actor,
        reason: cmd.reason,
      });
      out(`saved ${plan.key}: ${changes.map((c) => c.field).join(", ")} changed`);
      return;
    }
    case "set": {
      const target = await resolveTarget(db, cmd.target);
      const r = await askOnRaise(db, { who: cmd.who ?? {}, reason: cmd.reason, confirm: cmd.confirm, out }, () =>
        setPlanValue(db, { planKey: cmd.plan, target, input: cmd.value, confirm: cmd.confirm, actor, reason: cmd.reason }),
      );
      if (!r) return;
      const amount = (v: number) => (r.currency ? formatMoney(v, r.currency) : formatCount(v));
      const show = (v: number | null) => (v === null ? `none (its own ${amount(r.own)})` : amount(v));
      const clamp = r.clamped ? ` (you typed ${show(r.typed)}; clamped to the ${r.clamped === "max" ? "maximum" : "minimum"})` : "";
      out(`${r.planKey} on ${r.on}: ${show(r.previous)} → ${show(r.applied)}${clamp}`);
      return;
    }
    case "unset": {
      const target = await resolveTarget(db, cmd.target);
      const confirm = cmd.confirm === undefined ? {} : { confirm: cmd.confirm };
      const r = await askOnRaise(db, { who: cmd.who ?? {}, reason: cmd.reason, ...confirm, out }, () =>
        removePlanValue(db, { planKey: cmd.plan, target, actor, reason: cmd.reason, ...confirm }),
      );
      if (!r) return;
      const show = (v: number) => (r.currency ? formatMoney(v, r.currency) : formatCount(v));
      out(`${r.planKey} on ${r.on}: ${r.previous === null ? "none" : show(r.previous)} removed; its own ${show(r.own)} binds the plan's accounts`);
      return;
    }
    case "default": {
      const r = await askOnRaise(db, { who: cmd.who ?? {}, reason: cmd.reason, out }, () =>
        setDefaultPlan(db, { planKey: cmd.plan, actor, reason: cmd.reason }),
      );
      if (!r) return;
      out(`${r.key} is the default plan (was ${r.previous ?? "none"}): every account not assigned a plan is on it from the next reservation`);
      return;
    }
    case "key-assignable": {
      const r = await askOnRaise(db, { who: cmd.who ?? {}, reason: cmd.reason, out }, () =>
        setPlanKeyAssignable(db, { planKey: cmd.plan, assignable: cmd.on, actor, reason: cmd.reason }),
      );
      if (!r) return;
      out(r.keyAssignable ? `API keys may move accounts onto ${r.key}` : `API keys may no longer move accounts onto ${r.key} when that loosens them`);
      return;
    }
    case "delete": {
      const r = await deletePlan(db, { planKey: cmd.plan, actor, reason: cmd.reason });
      out(`deleted plan ${r.key}`);
      return;
    }
  }
}
