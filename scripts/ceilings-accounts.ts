// `npm run ceilings -- accounts ...`: the account verbs of lib/accounts from the command line, as
// the OS user (actor type cli). Kept beside scripts/ceilings.ts, which hands `accounts` here.
//   accounts assign <account> <plan> [--reason "…"]
//   accounts bulk <file.csv|file.json> [--reason "…"]
//   accounts block <account> --reason "…"
//   accounts unblock <account> --reason "…"
// A move to a looser plan and an unblock are raises: asked for as the owner of the personal token in
// CEILINGS_STAFF_TOKEN (scripts/ceilings-ask.ts); a bare --as is refused.
//   accounts show <account>
import { readFileSync } from "node:fs";
import type { Db } from "@/db/client";
import { AccountError, assignPlan, assignPlans, blockAccount, getAccount, parseAccountId, parseAssignmentFile, unblockAccount } from "@/lib/accounts";
import type { AuditActor } from "@/lib/audit/record";
import { formatCount, formatMoney } from "@/lib/format";
import { askOnRaise } from "./ceilings-ask";
import type { Credential } from "./ceilings-changes";

export const ACCOUNTS_USAGE = `  accounts assign <account> <plan> [--reason "why"]
                                       put one billing account on a plan; to a looser plan it
                                       is a raise, asked for as the owner of CEILINGS_STAFF_TOKEN
                                       (a second admin approves; a bare --as is refused)
  accounts bulk <file.csv|file.json> [--reason "why"]
                                       up to 10,000 accounts at once, all or nothing (CSV:
                                       account,plan per line; JSON: [{"account","plan"}, ...]);
                                       any looser row makes the whole file one change request
  accounts block <account> --reason "why"
                                       refuse the account on every endpoint
  accounts unblock <account> --reason "why"
                                       a raise: asked of a second admin (by the token)
  accounts show <account>              its plan, block and what binds it on each ceiling and budget`;

/** A mistake in the command line itself: scripts/ceilings.ts prints the usage. */
export class AccountsUsageError extends Error {}

/** A refused file or body: the error and each refused row, for the terminal. */
export function describeAccountError(error: AccountError, lines: (number | null)[] = []): string[] {
  const out = [`error: ${error.message}`];
  for (const r of error.rows) {
    const line = lines[r.index];
    out.push(`  row ${r.index}${line ? ` (line ${line})` : ""} ${JSON.stringify(r.account)}: ${r.message}`);
  }
  if (error.rowCount > error.rows.length) out.push(`  … and ${error.rowCount - error.rows.length} more`);
  return out;
}

function expectArgs(args: string[], count: number, usage: string): void {
  if (args.length !== count) throw new AccountsUsageError(`expected: accounts ${usage}`);
}

/** who: the personal token (and --as) a raise is asked with (scripts/ceilings.ts reads it with credentialOf). */
export async function runAccounts(db: Db, args: string[], opts: { reason?: string; actor: AuditActor; who?: Credential }): Promise<void> {
  const who = opts.who ?? {};
  const asking = (why: string) => {
    if (who.as !== undefined && !opts.reason?.trim()) throw new AccountsUsageError(`${why} with --as asks a second admin: it needs --reason "why"`);
    return { who, reason: opts.reason ?? "" };
  };
  const [verb, ...rest] = args;
  switch (verb) {
    case "assign": {
      expectArgs(rest, 2, "assign <account> <plan>");
      const [account = "", plan = ""] = rest;
      const r = await askOnRaise(db, asking("accounts assign"), () => assignPlan(db, { account, planKey: plan, actor: opts.actor, reason: opts.reason }));
      if (!r) return;
      const was = r.previousWasDefault ? `${r.previous} (the default, unassigned)` : r.previous;
      console.log(r.changed ? `${r.account}: ${was} → ${r.plan}` : `${r.account} is already on ${r.plan}: nothing changed`);
      return;
    }
    case "bulk": {
      expectArgs(rest, 1, "bulk <file.csv|file.json>");
      const [name = ""] = rest;
      const file = parseAssignmentFile(name, readFileSync(name, "utf8"));
      try {
        const r = await askOnRaise(db, asking("accounts bulk"), () => assignPlans(db, { rows: file.rows, actor: opts.actor, reason: opts.reason }));
        if (!r) return;
        console.log(`assigned ${formatCount(r.assigned)} account(s), ${formatCount(r.unchanged)} already on their plan (batch ${r.batch})`);
      } catch (error) {
        // The rows' lines in the file, so each refused row can be found.
        if (error instanceof AccountError && error.rows.length > 0) throw new AccountRowsError(error, file.lines);
        throw error;
      }
      return;
    }
    case "block": {
      expectArgs(rest, 1, 'block <account> --reason "why"');
      if (!opts.reason) throw new AccountsUsageError('accounts block needs --reason "why" for the audit log');
      const r = await blockAccount(db, { account: rest[0] ?? "", actor: opts.actor, reason: opts.reason });
      console.log(
        `blocked ${r.account}: every endpoint refuses it (gate blocked); unblock with: npm run ceilings -- accounts unblock ${JSON.stringify(r.account)} --reason "…"`,
      );
      return;
    }
    case "unblock": {
      expectArgs(rest, 1, 'unblock <account> --reason "why"');
      if (!opts.reason) throw new AccountsUsageError('accounts unblock needs --reason "why" for the audit log');
      const reason = opts.reason;
      const r = await askOnRaise(db, { who, reason }, () => unblockAccount(db, { account: rest[0] ?? "", actor: opts.actor, reason }));
      if (!r) return;
      console.log(`unblocked ${r.account} (blocked ${r.wasBlockedAt.toISOString()} by ${r.wasBlockedBy ?? "unknown"}: ${r.blockReason ?? "no reason"})`);
      return;
    }
    case "show": {
      expectArgs(rest, 1, "show <account>");
      const v = await getAccount(db, parseAccountId(rest[0] ?? ""));
      console.log(`${v.account}${v.known ? "" : "  (never seen: no reservation or assignment has named it)"}`);
      const set = v.planSetAt ? `, set ${v.planSetAt.toISOString()} by ${v.planSetBy ?? "unknown"}` : "";
      console.log(`  plan ${v.plan.key} (${v.plan.name})${v.planAssigned ? set : ", the default: none assigned"}`);
      console.log(
        v.blocked ? `  BLOCKED since ${v.blocked.at.toISOString()} by ${v.blocked.by ?? "unknown"}: ${v.blocked.reason ?? "no reason"}` : "  not blocked",
      );
      for (const c of v.ceilings) console.log(`  ceiling #${c.ceilingId} ${c.endpoint} ${c.metric}/${c.window}: ${formatCount(c.value)} (${c.source})`);
      for (const b of v.budgets) console.log(`  budget ${b.budget} ${b.window}: ${formatMoney(b.value, b.currency)} (${b.source})`);
      return;
    }
    default:
      throw new AccountsUsageError(verb ? `unknown accounts command '${verb}'` : "accounts needs a command: assign, bulk, block, unblock or show");
  }
}

/** A refused bulk file, with the line of each refused row. */
export class AccountRowsError extends Error {
  constructor(
    readonly error: AccountError,
    readonly lines: (number | null)[],
  ) {
    super(error.message);
  }
}
