import { sql } from "drizzle-orm";
import { openPostgres, resultRows } from "@/db/client";
import { seedDemoIfEmpty } from "@/db/seed";
import { env } from "@/lib/env";

// npm run db:seed: loads the demo endpoints, history and staff into the Postgres server in
// DATABASE_URL, the same data the embedded database gets on its first start. Only if it is empty.

async function main(): Promise<void> {
  const url = env().DATABASE_URL;
  if (!url) {
    throw new Error(
      "DATABASE_URL is not set. Set it to the server to seed, e.g. DATABASE_URL=postgres://user@host:5432/ceilings npm run db:seed\n" +
        "(the embedded database in DATA_DIR seeds itself on its first start)",
    );
  }
  const database = openPostgres(url, { max: 1 });
  try {
    const [row] = resultRows<{ t: string | null }>(await database.db.execute(sql`select to_regclass('public.endpoints')::text as t`));
    if (!row?.t) throw new Error("the database has no Ceilings tables yet: run npm run db:migrate first");
    const seeded = await seedDemoIfEmpty(database.db);
    if (!seeded) console.log("endpoints already exist: nothing seeded (the demo seed only fills an empty database)");
  } finally {
    await database.close();
  }
}

main().catch((error: unknown) => {
  console.error(`db:seed failed: ${error instanceof Error ? error.message : String(error)}`);
  process.exitCode = 1;
});
