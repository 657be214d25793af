import { InputError } from "@/lib/errors";
import { lockAccounts } from "@/lib/limits/lock-accounts";
import { randomUUID } from "node:crypto";
import { eq, inArray, sql } from "drizzle-orm";
import { type Db, resultRows } from "@/db/client";
import { auditEvents, plans, type NewAuditEvent } from "@/db/schema";
import { auditActorFields, recordAudit, type AuditActor } from "@/lib/audit/record";
import { replaceControlChars } from "@/lib/canonical";
import { actorName } from "@/lib/audit/actor";
import { type ChangeControl, controlDetails, isChangeControl, requireApproval } from "@/lib/control/context";
import { accountsLoosening, type Loosening } from "@/lib/limits/loosening";
import { AccountError, MAX_NAMED_ROWS, optionalReason, type RowProblem } from "./errors";
import { MAX_BULK_ROWS, parseAccountId, parsePlanKey } from "./parse";

// Moving billing accounts between plans (the billing service on an upgrade, staff, the CLI).
// No endpoint lock is taken: reserve_batch reads an account's plan without a lock, so a committed
// assignment binds every batch that starts after it, and counters already used in the window stay.
//
// Assigning the default plan's key stores that plan's id, not null. Null means "whatever plan is
// the default when the batch runs"; an explicit assignment is a statement about this account
// ("it is on free"), so when an admin later makes another plan the default, accounts assigned here
// stay on the plan they were assigned and only the never-assigned ones follow the switch.
//
// Change control (docs/change-control.md): a move the database finds looser for the account
// (ceilings.plan_loosening, its overrides first) is a raise. Staff are refused with
// approval_required and the whole body as one change request (`account.plan`), applied as a whole
// when a second admin approves it. An API key cannot ask: it may move an account to a tighter plan,
// or to a plan marked key_assignable (two admins marked it, once); any other loosening is refused
// (`plan_not_key_assignable`, each loosening row named). The check runs under the locks the write
// takes: the plans FOR SHARE (a key_assignable flip waits), the accounts FOR UPDATE in account order.

export type AssignmentRow = { account: string; plan: string };

export type AssignPlanParams = { account: string; planKey: string; actor: AuditActor; reason?: string; changeControl?: ChangeControl };
export type AssignPlanResult = {
  account: string;
  /** The plan's key the account is on now. */
  plan: string;
  /** The plan's key it was on before (the default plan's when it had none assigned). */
  previous: string;
  /** Whether the account was on the default plan by having no plan assigned. */
  previousWasDefault: boolean;
  /** False when the account was already assigned this plan: nothing was written or audited. */
  changed: boolean;
};

export type AssignPlansParams = { rows: readonly AssignmentRow[]; actor: AuditActor; reason?: string; changeControl?: ChangeControl };
export type AssignPlansResult = {
  /** Accounts whose plan changed (each audited as account.plan). */
  assigned: number;
  /** Accounts already assigned the plan their row names: nothing written for them. */
  unchanged: number;
  /** Ties the audit events of one bulk assignment together (details.batch). */
  batch: string;
};

type CheckedRow = { index: number; account: string; planKey: string; raw: string };
type PlanRow = { id: number; key: string; keyAssignable: boolean };

/** A value as the audit log and an error may show it: control characters replaced, length bounded. */
const shown = (text: string, max = 200) => replaceControlChars(text.length > max ? `${text.slice(0, max)}…` : text);

/**
 * Every row checked on its own and against the others, before any read: the account's canonical
 * form, the plan key's shape, and no account twice (two rows for one account would make the result
 * depend on their order). Every problem is kept, in body order.
 */
function checkRows(rows: readonly AssignmentRow[]): { checked: CheckedRow[]; problems: RowProblem[] } {
  const checked: CheckedRow[] = [];
  const problems: RowProblem[] = [];
  const firstIndex = new Map<string, number>();
  rows.forEach((row, index) => {
    try {
      const account = parseAccountId(row.account);
      const planKey = parsePlanKey(row.plan);
      const first = firstIndex.get(account);
      if (first !== undefined) {
        problems.push({
          index,
          account: shown(row.account),
          code: "duplicate_account",
          message: `account '${shown(account)}' is also in row ${first}: one row per account`,
        });
        return;
      }
      firstIndex.set(account, index);
      checked.push({ index, account, planKey, raw: row.plan });
    } catch (error) {
      if (!(error instanceof AccountError || error instanceof InputError)) throw error;
      problems.push({ index, account: shown(row.account), code: error.code === "unknown_plan" ? "unknown_plan" : "invalid_input", message: error.message });
    }
  });
  return { checked, problems };
}

/**
 * A refused assignment saves nothing but is logged as account.rejected, so staff see what the
 * billing service (or a person) tried: the rows named in the error, how many there were in all.
 */
async function recordRejected(
  db: Db,
  p: { actor: AuditActor; reason?: string },
  target: string | null,
  message: string,
  details: Record<string, unknown>,
): Promise<void> {
  await recordAudit(db, {
    ...auditActorFields(p.actor),
    action: "account.rejected",
    target,
    reason: p.reason?.trim() ? shown(p.reason.trim(), 500) : null,
    details: { error: message, ...details },
  });
}

/**
 * An assignment the HTTP boundary refused before the verb ran (a body that is no JSON, of the wrong
 * shape, too large), logged as account.rejected as the verb's own refusals are.
 */
export async function recordRefusedAssignment(
  db: Db,
  p: { actor: AuditActor; target: string | null; message: string; details?: Record<string, unknown> },
): Promise<void> {
  await recordRejected(db, { actor: p.actor }, p.target === null ? null : shown(p.target, 200), p.message, p.details ?? {});
}

/** A key's loosening refused inside the transaction (rolled back): logged after it, as account.rejected. */
async function refusedLogged<T>(db: Db, p: { actor: AuditActor; reason?: string }, target: string | null, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof AccountError && error.code === "plan_not_key_assignable") {
      await recordRejected(db, p, target, error.message, { refused: error.rowCount, problems: error.rows });
    }
    throw error;
  }
}

function rowsError(problems: RowProblem[], total: number): AccountError {
  const first = problems[0];
  const head = first ? `row ${first.index} (${first.account}): ${first.message}` : "";
  const more = problems.length > 1 ? ` and ${problems.length - 1} more row(s)` : "";
  return new AccountError(
    "invalid_rows",
    `${problems.length} of ${total} row(s) refused, nothing was assigned: ${head}${more}`,
    problems.slice(0, MAX_NAMED_ROWS),
    problems.length,
  );
}

/**
 * The plans the rows name, locked FOR SHARE until the assignment commits: against deletion, and
 * against a key_assignable flip or a value edit between the looseness check and the write.
 */
export async function lockPlans(tx: Db, keys: string[]): Promise<Map<string, PlanRow>> {
  const found = await tx
    .select({ id: plans.id, key: plans.key, keyAssignable: plans.keyAssignable })
    .from(plans)
    .where(inArray(plans.key, keys))
    .orderBy(plans.id)
    .for("share");
  return new Map(found.map((p) => [p.key, p]));
}

export type LooseRow = { index: number; account: string; plan: string; limits: Loosening[] };

const looseLine = (r: LooseRow) =>
  `${r.account} → ${r.plan} raises ${r.limits.map((l) => `${l.limitKind} #${l.limitId} ${l.before} → ${l.after}${l.measure === "micros" ? " micros" : ""}`).join(", ")}`;

/**
 * The looseness rule for one body, under its locks: nothing loosens, or the actor may (a real
 * ChangeControl: an approved request, break glass, setup; an API key moving only to key-assignable
 * plans), or it is refused: a key with plan_not_key_assignable, staff with approval_required.
 */
async function checkLoosening(
  tx: Db,
  p: { actor: AuditActor; changeControl?: ChangeControl },
  rows: readonly CheckedRow[],
  found: Map<string, PlanRow>,
): Promise<void> {
  if (isChangeControl(p.changeControl)) return;
  const loose = await accountsLoosening(
    tx,
    rows.map((r) => ({ account: r.account, planId: found.get(r.planKey)?.id ?? 0 })),
  );
  if (loose.size === 0) return;
  const looseRows: LooseRow[] = rows.flatMap((r) => {
    const limits = loose.get(r.account);
    return limits ? [{ index: r.index, account: r.account, plan: r.planKey, limits }] : [];
  });
  if (p.actor.type === "api_key") {
    const refused = looseRows.filter((r) => !found.get(r.plan)?.keyAssignable);
    if (refused.length === 0) return;
    const problems: RowProblem[] = refused.map((r) => ({
      index: r.index,
      account: shown(r.account),
      code: "loosens",
      message: `${looseLine(r)}: ${r.plan} is not assignable by key; an admin moves it (a second admin approves)`,
    }));
    const first = problems[0];
    throw new AccountError(
      "plan_not_key_assignable",
      `${refused.length} of ${rows.length} row(s) would move an account to a looser plan that is not assignable by key, nothing was assigned${first ? `: row ${first.index} (${first.account}): ${first.message}` : ""}`,
      problems.slice(0, MAX_NAMED_ROWS),
      problems.length,
    );
  }
  const shownRows = looseRows.slice(0, 5).map(looseLine).join("; ");
  const more = looseRows.length > 5 ? ` and ${looseRows.length - 5} more` : "";
  requireApproval(p.changeControl, `moving ${looseRows.length} account(s) to a looser plan (${shownRows}${more})`, {
    kind: "account.plan",
    change: { rows: rows.map((r) => ({ account: r.account, plan: r.planKey })) },
  });
}

async function defaultPlanKey(tx: Db): Promise<string> {
  const [row] = await tx.select({ key: plans.key }).from(plans).where(eq(plans.isDefault, true));
  // The migration seeds one and the plan verbs keep exactly one: none is a broken database.
  if (!row) throw new Error("no default plan: the plans table has no row with is_default");
  return row.key;
}

type Written = { account: string; previous: string | null };

/**
 * Upserts the rows in one statement, in account order, so two assignments touching the same
 * accounts lock them in the same order and cannot deadlock, whatever order their bodies had. A row
 * already on its plan is locked but not written. RETURNING's subquery reads the statement's
 * snapshot, so it sees each account's plan from before this statement: the previous plan.
 */
async function writeRows(tx: Db, rows: { account: string; planId: number }[], setBy: string): Promise<Written[]> {
  const input = JSON.stringify(rows.map((r) => ({ account: r.account, plan_id: r.planId })));
  return resultRows<Written>(
    await tx.execute(sql`
      insert into accounts as a (account, plan_id, plan_set_at, plan_set_by)
      select r.account, r.plan_id, now(), ${setBy}
        from jsonb_to_recordset(${input}::jsonb) as r(account text, plan_id integer)
       order by r.account
      on conflict (account) do update
         set plan_id = excluded.plan_id, plan_set_at = excluded.plan_set_at, plan_set_by = excluded.plan_set_by
       where a.plan_id is distinct from excluded.plan_id
      returning a.account,
        (select p.key from accounts o join plans p on p.id = o.plan_id where o.account = a.account) as previous`),
  );
}

/**
 * The refusal of a body of more than MAX_BULK_ROWS rows, audited (account.rejected with the count),
 * before any row is read: the HTTP boundary calls it as soon as it has counted them.
 */
export async function refuseTooMany(db: Db, p: { rows: number; actor: AuditActor; reason?: string }): Promise<AccountError> {
  const message = `at most ${MAX_BULK_ROWS} accounts at once, got ${p.rows}: nothing was assigned`;
  await recordRejected(db, p, null, message, { rows: p.rows });
  return new AccountError("too_many", message);
}

/**
 * Assigns plans to accounts, all or nothing: every row is checked first and one bad row refuses
 * the body (every bad row named with its index, the first MAX_NAMED_ROWS of them); more than
 * MAX_BULK_ROWS rows are refused before anything is read. One audit event per account whose plan
 * changed (account.plan, target the account), so the account's own history lists it; details.batch
 * ties the events of one body together.
 */
export async function assignPlans(db: Db, p: AssignPlansParams): Promise<AssignPlansResult> {
  if (p.rows.length > MAX_BULK_ROWS) throw await refuseTooMany(db, { rows: p.rows.length, actor: p.actor, reason: p.reason });
  if (p.rows.length === 0) throw InputError.of("no accounts to assign: send at least one row");
  const reason = optionalReason(p.reason);
  const { checked, problems } = checkRows(p.rows);
  const batch = randomUUID();
  const outcome = await refusedLogged(db, p, null, () =>
    db.transaction(async (tx) => {
      const wanted = [...new Set(checked.map((r) => r.planKey))];
      const found = wanted.length ? await lockPlans(tx, wanted) : new Map<string, PlanRow>();
      for (const row of checked) {
        if (!found.has(row.planKey))
          problems.push({ index: row.index, account: shown(row.account), code: "unknown_plan", message: `unknown plan '${row.planKey}'` });
      }
      if (problems.length > 0) return { ok: false as const };
      await lockAccounts(
        tx,
        checked.map((r) => r.account),
      );
      await checkLoosening(tx, p, checked, found);
      const byAccount = new Map(checked.map((r) => [r.account, r]));
      const written = await writeRows(
        tx,
        checked.map((r) => ({ account: r.account, planId: found.get(r.planKey)?.id ?? 0 })),
        actorName(p.actor),
      );
      const fallback = written.some((w) => w.previous === null) ? await defaultPlanKey(tx) : null;
      const events: NewAuditEvent[] = written.map((w) => {
        const row = byAccount.get(w.account);
        return {
          ...auditActorFields(p.actor),
          action: "account.plan",
          target: w.account,
          rawInput: row?.raw ?? null,
          reason,
          details: {
            plan: row?.planKey,
            previous: w.previous ?? fallback,
            previousWasDefault: w.previous === null,
            batch,
            rows: checked.length,
            ...controlDetails(p.changeControl),
          },
        };
      });
      // In slices: one INSERT of 10,000 audit rows would pass more bind parameters than Postgres takes.
      for (let i = 0; i < events.length; i += 1000) await tx.insert(auditEvents).values(events.slice(i, i + 1000));
      return { ok: true as const, assigned: written.length };
    }),
  );
  if (!outcome.ok) {
    problems.sort((a, b) => a.index - b.index);
    const error = rowsError(problems, p.rows.length);
    await recordRejected(db, p, null, error.message, { rows: p.rows.length, refused: problems.length, problems: error.rows });
    throw error;
  }
  return { assigned: outcome.assigned, unchanged: checked.length - outcome.assigned, batch };
}

/** Assigns one account its plan (PUT /api/v1/accounts/{account}); audited as account.plan. */
export async function assignPlan(db: Db, p: AssignPlanParams): Promise<AssignPlanResult> {
  let account: string;
  let planKey: string;
  try {
    account = parseAccountId(p.account);
    planKey = parsePlanKey(p.planKey);
  } catch (error) {
    if (error instanceof AccountError || error instanceof InputError)
      await recordRejected(db, p, shown(p.account), error.message, { plan: shown(p.planKey, 64) });
    throw error;
  }
  const reason = optionalReason(p.reason);
  const outcome = await refusedLogged(db, p, account, () =>
    db.transaction(async (tx) => {
      const found = await lockPlans(tx, [planKey]);
      const plan = found.get(planKey);
      if (!plan) return null;
      await lockAccounts(tx, [account]);
      await checkLoosening(tx, p, [{ index: 0, account, planKey, raw: p.planKey }], found);
      const [written] = await writeRows(tx, [{ account, planId: plan.id }], actorName(p.actor));
      if (!written) return { account, plan: plan.key, previous: plan.key, previousWasDefault: false, changed: false };
      const previous = written.previous ?? (await defaultPlanKey(tx));
      await recordAudit(tx, {
        ...auditActorFields(p.actor),
        action: "account.plan",
        target: account,
        rawInput: p.planKey,
        reason,
        details: { plan: plan.key, previous, previousWasDefault: written.previous === null, ...controlDetails(p.changeControl) },
      });
      return { account, plan: plan.key, previous, previousWasDefault: written.previous === null, changed: true };
    }),
  );
  if (!outcome) {
    const message = `unknown plan '${planKey}'`;
    await recordRejected(db, p, account, message, { plan: planKey });
    throw new AccountError("unknown_plan", message);
  }
  return outcome;
}
