import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openPostgres } from "@/db/client";
import { SilentHost } from "@/db/silent-host";
import { skipWithoutDatabase } from "@/db/testing";
import { env } from "@/lib/env";
import { handleHealth } from "@/app/api/v1/_lib/health-handler";
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
      expect(status).toMatchObject({ ok: false, timedOut: true });
      expect(Date.now() - started).toBeLessThan(2000);
    } finally {
      void database.close();
    }
  });

  it("says why, and the health check's 503 says it too: no connection, or no answer in time", async () => {
    // Port 9 (discard) has no listener here: the connection is refused at once.
    const refused = openPostgres("postgres://postgres@127.0.0.1:9/nowhere", { max: 1, connectTimeoutSeconds: 1 });
    const silentDb = openPostgres(`postgres://postgres@127.0.0.1:${silentPort}/postgres`, { max: 1, connectTimeoutSeconds: 30 });
    try {
      expect(await probeDatabase(refused.db, 1500)).toMatchObject({ ok: false, timedOut: false, error: expect.anything() });
      const health = await handleHealth({ db: async () => refused.db });
      expect(health.status).toBe(503);
      expect(JSON.parse(health.body)).toMatchObject({ status: "unavailable", reason: "connection", error: { code: "unavailable" } });
      // Bounded by the probe's own 2 s.
      const silentHealth = await handleHealth({ db: async () => silentDb.db });
      expect(silentHealth.status).toBe(503);
      expect(JSON.parse(silentHealth.body)).toMatchObject({ status: "unavailable", reason: "deadline" });
    } finally {
      void refused.close();
      void silentDb.close();
    }
  });
});
