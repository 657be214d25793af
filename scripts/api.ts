import { startApiServer } from "@/app/api/v1/_lib/api-server";
import { closeDb, getDb, getEnforcementDb } from "@/db/client";
import { ApiKeyCache } from "@/lib/api-keys";
import { prepareDatabaseWithDemo } from "@/lib/demo";
import { batcherFor, warmResolveLanes } from "@/lib/enforcement";
import { env } from "@/lib/env";

// `npm run api`: the enforcement API (/api/v1 and /api/health) on a server of its own, without
// Next: what services call. On DATABASE_URL, or without it on the embedded server (started if no
// other process has). Connections are opened before the first call: the batch lanes and
// the settle/release lanes on the enforcement pool, and API keys on a pool of their own (the
// app's), read through a cache that every change of a key empties (lib/api-keys/cache.ts).

async function main(): Promise<void> {
  const e = env();
  await prepareDatabaseWithDemo();
  const [db, enforcement] = await Promise.all([getDb(), getEnforcementDb()]);
  const keys = await ApiKeyCache.start(db);
  // One reservation batch in flight, not the library's two. The library's callers all come back
  // in the tick their batch is answered, so the next batch is full at once; an HTTP server's come
  // back one by one over their sockets, and with a second lane free each batch left with what had
  // arrived (18 requests on average under 64 connections, against 30-31 with one): the database
  // spent 126-170 µs of CPU a request instead of 94-114. The database is what every process of a
  // deployment shares; here, where the load generator and this server take most of the two cores,
  // HTTP reserve's rate moved within the hour's noise (npm run bench:http, interleaved, 2026-12-07:
  // docs/enforcement.md).
  const batcher = batcherFor(enforcement, { maxInFlight: 1 });
  // Warm, not required: a database that is down now is answered 503 per call until it is up.
  await Promise.all([batcher.warm(), warmResolveLanes(enforcement)]).catch((error: unknown) => {
    console.error(`api: could not open the enforcement connections yet (${error instanceof Error ? error.message : String(error)}); calls open them`);
  });
  const server = await startApiServer({ deps: { db: async () => enforcement, adminDb: async () => db, keys }, port: e.API_PORT, host: e.API_HOST });
  console.log(`api: the enforcement API on ${server.url}/api/v1 (pid ${process.pid})`);
  await new Promise<void>((resolve) => {
    for (const signal of ["SIGINT", "SIGTERM"] as const) process.once(signal, () => resolve());
  });
  console.log("api: stopping");
  // Requests in flight get their answer (within the deadline) before the pools close.
  await server.close(e.ENFORCEMENT_DEADLINE_MS + 500);
  await keys.close();
  await closeDb();
}

main().catch((error: unknown) => {
  console.error("api failed", error);
  process.exitCode = 1;
});
