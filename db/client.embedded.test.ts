import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { sql } from "drizzle-orm";
import { afterAll, expect, it } from "vitest";
import { openPglite } from "./client";

const root = await mkdtemp(path.join(tmpdir(), "ceilings-client-"));
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

it("opens an embedded database whose parent folders do not exist yet, as in a fresh clone", async () => {
  const database = await openPglite(path.join(root, ".data", "pglite"));
  try {
    await expect(database.db.execute(sql`select 1`)).resolves.toBeDefined();
  } finally {
    await database.close();
  }
}, 60_000);
