import type { EmbeddedServer } from "@/db/embedded/server";
import { prepareDatabase } from "@/db/client";
import { env } from "@/lib/env";
import { seedDemoIfEmpty } from "./seed";

/**
 * The configured database, ready to use: DATABASE_URL as it is, or the embedded server started,
 * migrated and, while it has no endpoints, seeded with the demo so no page of a first start is
 * empty. Every entry point calls this before it opens the pools (getDb only migrates).
 */
export function prepareDatabaseWithDemo(): Promise<{ url: string; embedded?: EmbeddedServer }> {
  const dataDir = env().DATA_DIR;
  // On stderr: stdout of a CLI is data (`ceilings export > file`, `db:url`).
  return prepareDatabase((db) => seedDemoIfEmpty(db, { dataDir, log: (line) => console.error(line) }));
}
