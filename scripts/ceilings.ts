// The kill switch for when the dashboard is down: the same lib/ceilings calls, on DATABASE_URL or
// the embedded server (the one a running dashboard uses), logged with the operating-system user.
//   npm run ceilings -- status
//   npm run ceilings -- kill <endpoint> --reason "…"
//   npm run ceilings -- restore <endpoint> [--reason "…"]
//   npm run ceilings -- kill-all --reason "…"
import os from "node:os";
import { parseArgs } from "node:util";
import { closeDb, getDb } from "@/db/client";
import type { AuditActor } from "@/lib/audit/record";
import { CeilingError, formatCount, getKillState, killAll, killEndpoint, listEndpointsOverview, restoreEndpoint } from "@/lib/ceilings";

const USAGE = `usage: npm run ceilings -- <command>
  status                               every endpoint, its ceilings and what is killed
  kill <endpoint> --reason "why"       set every ceiling of the endpoint to 0
  restore <endpoint> [--reason "why"]  put back the values from before the kill
  kill-all --reason "why"              kill every endpoint (restore each on its own)`;

class UsageError extends Error {}

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
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { reason: { type: "string" }, help: { type: "boolean", short: "h" } },
  });
  const [command, endpoint, ...extra] = positionals;
  if (values.help || !command) throw new UsageError(values.help ? "" : "a command is required");
  if (extra.length > 0) throw new UsageError(`unexpected arguments: ${extra.join(" ")}`);

  const db = await getDb();
  try {
    switch (command) {
      case "status": {
        if (endpoint) throw new UsageError("status takes no endpoint");
        for (const e of await listEndpointsOverview(db)) {
          const killed = e.state === "killed" ? `  KILLED ${ago(e.killedAt)} by ${e.killedBy ?? "unknown"}` : "";
          console.log(`${e.key}  [${e.state}]${killed}`);
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
        const { lastKillRefusal } = await getKillState(db);
        if (lastKillRefusal) console.log(`last kill_switch refusal: ${lastKillRefusal.endpointKey} ${ago(lastKillRefusal.lastAt)}`);
        return;
      }
      case "kill": {
        if (!endpoint) throw new UsageError("kill needs an endpoint");
        if (!values.reason) throw new UsageError("kill needs --reason \"why\" for the audit log");
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
        if (!values.reason) throw new UsageError("kill-all needs --reason \"why\" for the audit log");
        const changes = await killAll(db, { actor: cliActor(), reason: values.reason });
        console.log(`killed ${new Set(changes.map((c) => c.endpointKey)).size} endpoint(s); restore each with: npm run ceilings -- restore <endpoint>`);
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
    if (error instanceof UsageError) {
      if (error.message) console.error(`error: ${error.message}\n`);
      console.error(USAGE);
      process.exit(2);
    }
    if (error instanceof CeilingError) {
      console.error(`error: ${error.message}`);
      process.exit(1);
    }
    console.error(error);
    process.exit(1);
  },
);
