import { sql } from "drizzle-orm";
import { openPostgres, resultRows, stopEmbeddedIfUnused } from "@/db/client";
import { prepareDatabaseWithDemo, seedDemoIfEmpty } from "@/lib/demo";
import { env } from "@/lib/env";

// npm run db:seed: loads the demo endpoints, history and staff into the Postgres server in
// DATABASE_URL, the same data the embedded database gets on its first start. Only if it is empty.
// (The embedded server seeds itself; on it this finds the demo already there.)

async function main(): Promise<void> {
  const { url, embedded } = await prepareDatabaseWithDemo();
  const database = openPostgres(url, { max: 1 });
  try {
    const [row] = resultRows<{ t: string | null }>(await database.db.execute(sql`select to_regclass('public.endpoints')::text as t`));
    if (!row?.t) throw new Error("the database has no Ceilings tables yet: run npm run db:migrate first");
    const seeded = await seedDemoIfEmpty(database.db);
    if (!seeded) console.log("endpoints already exist: nothing seeded (the demo seed only fills an empty database)");
  } finally {
    await database.close();
    if (embedded?.startedHere) await stopEmbeddedIfUnused(embedded, env().DATA_DIR);
  }
}

main().catch((error: unknown) => {
  console.error(`db:seed failed: ${error instanceof Error ? error.message : String(error)}`);
  process.exitCode = 1;
});
