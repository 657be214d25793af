import { DomainError } from "@/lib/errors";
// The kill switch for when the dashboard is down: the same lib/ceilings calls, on DATABASE_URL or
// the embedded server (the one a running dashboard uses), logged with the operating-system user.
//   npm run ceilings -- status
//   npm run ceilings -- kill <endpoint> --reason "…"
//   npm run ceilings -- restore <endpoint> [--reason "…"]
//   npm run ceilings -- kill-all --reason "…"
//   npm run ceilings -- kill-budget <budget> --reason "…" | restore-budget <budget> [--reason "…"]
//   npm run ceilings -- export [--out ceilings.json] | schema | plan ceilings.json | apply ceilings.json --reason "…" [--break-glass]
//   npm run ceilings -- requests | approve <id> | reject <id> | cancel <id> | acknowledge <id> (scripts/ceilings-changes.ts);
//     every verb that acts as a staff member (approve, reject, cancel, acknowledge, asking for a raise
//     with apply, plans or accounts, --break-glass) needs CEILINGS_STAFF_TOKEN (a personal token): --as alone is refused
//   npm run ceilings -- accounts assign|bulk|block|unblock|show ... (scripts/ceilings-accounts.ts)
//   npm run ceilings -- plans [show|create|update|set|unset|default|delete] ... (scripts/ceilings-plans.ts)
//   npm run ceilings -- usage sources | pull <source> | import <source> <file> (scripts/ceilings-usage.ts)
import { writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { closeDb, getDb } from "@/db/client";
import type { AuditActor } from "@/lib/audit/record";
import { CATALOG_SCHEMA_FILE, catalogJsonSchema, exportCatalog } from "@/lib/catalog";
import { getKillState, killAll, killEndpoint, listEndpointsOverview, restoreEndpoint } from "@/lib/ceilings";
import { prepareDatabaseWithDemo } from "@/lib/demo";
import { formatCount, formatMoney } from "@/lib/format";
import { budgetSentenceOf, killBudget, readBudgets, restoreBudget } from "@/lib/budgets";
import { isKilled } from "@/lib/budgets/read";
import { budgetStopHeadline } from "@/lib/budgets/stop-words";
import { AccountError } from "@/lib/accounts";
import { ACCOUNTS_USAGE, AccountRowsError, AccountsUsageError, describeAccountError, runAccounts } from "./ceilings-accounts";
import { parsePlansArgs, PLANS_USAGE, PlansUsageError, runPlans } from "./ceilings-plans";
import { CHANGE_VERBS, CHANGES_USAGE, ChangesUsageError, credentialOf, parseChangesArgs, runChanges } from "./ceilings-changes";
import { FileError, parseApplyOptions, runApplyFile, runPlanFile } from "./ceilings-file";

import { egressPolicyFrom } from "@/lib/alerts/egress";
import { env, readSecret } from "@/lib/env";
import { compareSourceDays } from "@/lib/reconciliation/compare";
import { ReconciliationError } from "@/lib/reconciliation/errors";
import { describeUsageError, parseUsageArgs, runUsage, USAGE_SOURCES_USAGE, UsageCliError } from "./ceilings-usage";

const USAGE = `usage: npm run ceilings -- <command>
  status                               every endpoint, its ceilings and what is killed
  kill <endpoint> --reason "why"       set every ceiling of the endpoint to 0
  restore <endpoint> [--reason "why"]  put back the values from before the kill
  kill-all --reason "why"              kill every endpoint (restore each on its own)
  kill-budget <budget> --reason "why"  set the budget to 0: every call on its members is refused
  restore-budget <budget> [--reason "why"]
                                       put back the budget's value from before the kill
  export [--out <file>]                the whole catalog as a catalog file, on stdout; with --out
                                       into <file>, and its JSON Schema beside it (${CATALOG_SCHEMA_FILE})
  schema                               the JSON Schema of the catalog file, on stdout
  plan <file>                          what applying the file would change (exit 1 if invalid);
                                       each raise marked "NEEDS APPROVAL", counted at the end
  apply <file> --reason "why" [--confirm-raise]
        [--break-glass] [--for 2h | --until <ISO time>]
                                       apply the file in one transaction, or nothing: what
                                       needs no approval at once; each raise becomes a change
                                       request asked by the owner of CEILINGS_STAFF_TOKEN (an
                                       operator or admin; a bare --as is refused), its id
                                       printed; --break-glass (admin, by the token, a reason
                                       of 10+ characters)
                                       applies the raises at once as break glass;
                                       --for/--until end a value raise (put back by the worker)
${CHANGES_USAGE}
${PLANS_USAGE}
${ACCOUNTS_USAGE}
${USAGE_SOURCES_USAGE}`;

class UsageError extends Error {}

function schemaText(): string {
  return `${JSON.stringify(catalogJsonSchema(), null, 2)}\n`;
}

function cliActor(): AuditActor {
  return { type: "cli", name: os.userInfo().username };
}

function ago(date: Date | null): string {
  if (!date) return "at an unknown time";
  const minutes = Math.round((Date.now() - date.getTime()) / 60_000);
  if (minutes < 1) return "just now";
  if (minutes < 120) return `${minutes} min ago`;
  return `${Math.round(minutes / 60)} h ago`;
}

async function main(argv: string[]): Promise<void> {
  // The request verbs take options of their own: read before the database starts, so a typo costs nothing.
  if (argv[0] !== undefined && CHANGE_VERBS.has(argv[0])) {
    const command = parseChangesArgs(argv);
    await prepareDatabaseWithDemo();
    const db = await getDb();
    try {
      await runChanges(db, command);
    } finally {
      await closeDb();
    }
    return;
  }
  // Plans take options of their own: read before the database starts, so a typo costs nothing.
  if (argv[0] === "plans") {
    const command = parsePlansArgs(argv.slice(1));
    await prepareDatabaseWithDemo();
    const db = await getDb();
    try {
      await runPlans(db, command, cliActor());
    } finally {
      await closeDb();
    }
    return;
  }
  // Usage sources take options of their own: read before the database starts, so a typo costs nothing.
  if (argv[0] === "usage") {
    const command = parseUsageArgs(argv.slice(1));
    await prepareDatabaseWithDemo();
    const db = await getDb();
    try {
      // The worker's secrets and egress rules, so a pull from here behaves as the worker's would.
      await runUsage(db, command, {
        actor: cliActor(),
        secrets: readSecret,
        egress: egressPolicyFrom(env().USAGE_SOURCE_ALLOW_HOSTS),
        compare: compareSourceDays,
      });
    } finally {
      await closeDb();
    }
    return;
  }
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      reason: { type: "string" },
      "confirm-raise": { type: "boolean" },
      out: { type: "string" },
      as: { type: "string" },
      "break-glass": { type: "boolean" },
      for: { type: "string" },
      until: { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
  const [command, endpoint, ...extra] = positionals;
  if (values.help || !command) throw new UsageError(values.help ? "" : "a command is required");
  if (command === "accounts") {
    // A bare --as is refused before the database starts: a raise is asked by the token's owner only.
    const who = credentialOf(values.as, process.env, `accounts ${positionals[1] ?? ""} (asking for a raise)`);
    await prepareDatabaseWithDemo();
    const db = await getDb();
    try {
      await runAccounts(db, positionals.slice(1), { reason: values.reason, actor: cliActor(), who });
    } catch (error) {
      if (error instanceof AccountsUsageError) throw new UsageError(error.message);
      throw error;
    } finally {
      await closeDb();
    }
    return;
  }
  if (extra.length > 0) throw new UsageError(`unexpected arguments: ${extra.join(" ")}`);
  if (values.out !== undefined && command !== "export") throw new UsageError("--out is an option of export only");
  if (command !== "apply" && (values.as !== undefined || values["break-glass"] !== undefined || values.for !== undefined || values.until !== undefined)) {
    throw new UsageError("--as, --break-glass, --for and --until are options of apply");
  }
  const applyControl = command === "apply" ? parseApplyOptions(values) : { breakGlass: false };
  // The schema needs no database: an editor's file check must work anywhere.
  if (command === "schema") {
    process.stdout.write(schemaText());
    return;
  }

  await prepareDatabaseWithDemo();
  const db = await getDb();
  try {
    switch (command) {
      case "status": {
        if (endpoint) throw new UsageError("status takes no endpoint");
        for (const e of await listEndpointsOverview(db)) {
          const killed = e.state === "killed" ? `  KILLED ${ago(e.killedAt)} by ${e.killedBy ?? "unknown"}` : "";
          console.log(`${e.key}  [${e.state}]${killed}`);
          // Stopped by a budget: every call refused although its own ceilings have room.
          for (const stop of e.budgetStops) console.log(`  ${budgetStopHeadline(stop, new Date())}`);
          for (const c of e.ceilings) {
            const use =
              c.scope === "destination"
                ? `${formatCount(c.scopes)} in cooldown`
                : c.scope === "caller"
                  ? `busiest account ${formatCount(c.used)}, ${formatCount(c.scopes)} account(s) in this window`
                  : `used ${formatCount(c.used)}, held ${formatCount(c.held)}, remaining ${formatCount(c.remaining)}`;
            console.log(`  #${c.id} ${c.guarantee}  (${use})`);
          }
        }
        for (const b of await readBudgets(db)) {
          const state = b.budget.archivedAt ? "archived" : isKilled(b.budget) ? `KILLED by ${b.budget.killedBy ?? "unknown"}` : "live";
          console.log(`budget ${b.budget.key}  [${state}]  ${budgetSentenceOf(b)}`);
        }
        const { lastKillRefusal } = await getKillState(db);
        if (lastKillRefusal) console.log(`last kill_switch refusal: ${lastKillRefusal.endpointKey} ${ago(lastKillRefusal.lastAt)}`);
        return;
      }
      case "kill": {
        if (!endpoint) throw new UsageError("kill needs an endpoint");
        if (!values.reason) throw new UsageError('kill needs --reason "why" for the audit log');
        const changes = await killEndpoint(db, { endpointKey: endpoint, actor: cliActor(), reason: values.reason });
        console.log(`killed ${endpoint}: ${changes.map((c) => `#${c.ceilingId} ${formatCount(c.previous)} → 0`).join(", ")}`);
        return;
      }
      case "restore": {
        if (!endpoint) throw new UsageError("restore needs an endpoint");
        const changes = await restoreEndpoint(db, { endpointKey: endpoint, actor: cliActor(), reason: values.reason });
        console.log(`restored ${endpoint}: ${changes.map((c) => `#${c.ceilingId} 0 → ${formatCount(c.applied)}`).join(", ")}`);
        return;
      }
      case "kill-all": {
        if (endpoint) throw new UsageError("kill-all takes no endpoint");
        if (!values.reason) throw new UsageError('kill-all needs --reason "why" for the audit log');
        const changes = await killAll(db, { actor: cliActor(), reason: values.reason });
        console.log(`killed ${new Set(changes.map((c) => c.endpointKey)).size} endpoint(s); restore each with: npm run ceilings -- restore <endpoint>`);
        return;
      }
      case "kill-budget": {
        if (!endpoint) throw new UsageError("kill-budget needs a budget");
        if (!values.reason) throw new UsageError('kill-budget needs --reason "why" for the audit log');
        const r = await killBudget(db, { key: endpoint, actor: cliActor(), reason: values.reason });
        console.log(`killed budget ${r.key}: ${formatMoney(r.previous, r.currency)} → 0; restore with: npm run ceilings -- restore-budget ${r.key}`);
        return;
      }
      case "restore-budget": {
        if (!endpoint) throw new UsageError("restore-budget needs a budget");
        const r = await restoreBudget(db, { key: endpoint, actor: cliActor(), reason: values.reason });
        console.log(`restored budget ${r.key}: 0 → ${formatMoney(r.applied, r.currency)}`);
        return;
      }
      case "export": {
        if (endpoint) throw new UsageError("export takes no argument: npm run -s ceilings -- export --out ceilings.json (or > ceilings.json)");
        const text = `${JSON.stringify(await exportCatalog(db), null, 2)}\n`;
        if (!values.out) {
          process.stdout.write(text);
          return;
        }
        // The file's "$schema" is ./ceilings.schema.json: it is written beside the file.
        const schemaPath = path.join(path.dirname(values.out), CATALOG_SCHEMA_FILE);
        writeFileSync(values.out, text);
        writeFileSync(schemaPath, schemaText());
        console.log(`wrote ${values.out} and ${schemaPath}`);
        return;
      }
      case "plan": {
        if (!endpoint) throw new UsageError("plan needs a catalog file");
        await runPlanFile(db, endpoint);
        return;
      }
      case "apply": {
        if (!endpoint) throw new UsageError("apply needs a catalog file");
        if (!values.reason) throw new UsageError('apply needs --reason "why" for the audit log');
        await runApplyFile(db, {
          file: endpoint,
          reason: values.reason,
          confirmRaise: values["confirm-raise"] === true,
          osUser: os.userInfo().username,
          ...applyControl,
          ...(values.as ? { as: values.as } : {}),
        });
        return;
      }
      default:
        throw new UsageError(`unknown command '${command}'`);
    }
  } finally {
    await closeDb();
  }
}

main(process.argv.slice(2)).then(
  () => process.exit(0),
  (error: unknown) => {
    if (error instanceof UsageError || error instanceof PlansUsageError || error instanceof ChangesUsageError || error instanceof UsageCliError) {
      if (error.message) console.error(`error: ${error.message}\n`);
      console.error(USAGE);
      process.exit(2);
    }
    if (error instanceof FileError) {
      console.error(`error: ${error.message}`);
      for (const p of error.problems) console.error(`  ${p}`);
      process.exit(1);
    }
    if (error instanceof AccountRowsError || error instanceof AccountError) {
      for (const line of error instanceof AccountRowsError ? describeAccountError(error.error, error.lines) : describeAccountError(error)) console.error(line);
      process.exit(1);
    }
    if (error instanceof ReconciliationError) {
      for (const line of describeUsageError(error)) console.error(line);
      process.exit(1);
    }
    if (error instanceof DomainError) {
      console.error(`error: ${error.message}`);
      process.exit(1);
    }
    console.error(error);
    process.exit(1);
  },
);
