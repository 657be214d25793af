import { configFromEnv, connectionUrl, DEFAULT_PORTS, down, members, readState, up } from "./ha/cluster";
import { openPostgres, migrateDatabase } from "@/db/client";
import { connectionBound, maxConnectionsFor } from "@/lib/connection-bound";

// `npm run ha -- up | status | down`: a local highly available cluster (three etcd members, three
// Patroni-managed PostgreSQL 15 nodes with synchronous replication) in .data-ha/, on loopback.
// See docs/high-availability.md.

const usage = "usage: npm run ha -- up | status | down   (env: HA_DIR, HA_PG_PORTS, HA_REST_PORTS, HA_ETCD_PORTS, HA_SYNC, HA_STRICT, HA_APP_PROCESSES)";

async function main(): Promise<void> {
  const command = process.argv[2];
  const config = configFromEnv(process.env, "HA_", { dir: ".data-ha", ...DEFAULT_PORTS });
  if (command === "up") {
    try {
      await up(config);
      // The schema goes in through the same multi-host URL the app will use.
      const database = openPostgres(connectionUrl(config), { max: 1 });
      try {
        await migrateDatabase(database);
      } finally {
        await database.close();
      }
    } catch (error) {
      // Never leave half a cluster running.
      await down(config.dir).catch(() => undefined);
      throw error;
    }
    await printStatus();
    const bound = connectionBound(config.pgPorts.length);
    console.log(
      `max_connections ${maxConnectionsFor(config.appProcesses, config.pgPorts.length)}: ${config.appProcesses} app processes (HA_APP_PROCESSES) × ${bound.peak} connections at most each (${bound.held} held), + 20`,
    );
    console.log(`\nDATABASE_URL=${connectionUrl(config)}`);
    console.log(`(migrated; seed with: DATABASE_URL='${connectionUrl(config)}' npm run db:seed)`);
  } else if (command === "status") {
    await printStatus();
  } else if (command === "down") {
    await down(config.dir);
  } else {
    console.error(usage);
    process.exitCode = 2;
  }

  async function printStatus(): Promise<void> {
    const state = readState(config.dir);
    if (!state) {
      console.log(`no cluster in ${config.dir}`);
      return;
    }
    const ms = await members(state.config);
    if (!ms) {
      console.log(`no Patroni node answers on ${state.config.restPorts.join(", ")}`);
      return;
    }
    const mode = state.config.synchronous ? `synchronous${state.config.strict ? " (strict)" : ""}` : "asynchronous";
    console.log(`cluster ${state.config.scope} in ${state.config.dir}, ${mode} replication`);
    for (const m of ms) {
      console.log(
        `  ${m.name.padEnd(6)} ${`${m.host}:${m.port}`.padEnd(16)} ${m.role.padEnd(13)} ${m.state.padEnd(10)} timeline ${m.timeline ?? "?"} lag ${m.lag ?? 0}`,
      );
    }
    console.log(`URL: ${connectionUrl(state.config)}`);
  }
}

main().catch((error: unknown) => {
  console.error(`ha: ${error instanceof Error ? error.message : String(error)}`);
  process.exitCode = 1;
});
