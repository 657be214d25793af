import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openPostgres } from "@/db/client";
import { SilentHost } from "@/db/silent-host";
import { skipWithoutDatabase } from "@/db/testing";
import { env } from "@/lib/env";
import { probeDatabase } from "./database-status";

// The dashboard's first question: which node answers, and is it the primary. It must come back
// within its bound even when the server accepts the connection and then says nothing, as a node
// does while it is stopped with SIGSTOP or cut off mid-failover.

describe.skipIf(skipWithoutDatabase())("probeDatabase", () => {
  const silent = new SilentHost();
  let silentPort = 0;
  beforeAll(async () => {
    silentPort = await silent.listen();
  });
  afterAll(() => silent.close());

  it("names the primary it reached", async () => {
    const database = openPostgres(env().TEST_DATABASE_URL ?? "", { max: 1 });
    try {
      const status = await probeDatabase(database.db);
      expect(status).toMatchObject({ ok: true, role: "primary" });
      if (status.ok) expect(status.server).toMatch(/^(127\.0\.0\.1:\d+|local|::1:\d+)$/);
    } finally {
      await database.close();
    }
  });

  it("answers not ok within its bound when the server never answers", async () => {
    const database = openPostgres(`postgres://postgres@127.0.0.1:${silentPort}/postgres`, { max: 1, connectTimeoutSeconds: 30 });
    const started = Date.now();
    try {
      const status = await probeDatabase(database.db, 300);
      expect(status.ok).toBe(false);
      expect(Date.now() - started).toBeLessThan(2000);
    } finally {
      void database.close();
    }
  });
});
