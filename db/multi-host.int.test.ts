import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { env } from "@/lib/env";
import { classifyFailure } from "@/lib/enforcement/unavailable";
import { openPostgres, resultRows } from "./client";
import { probeTimeoutFor, urlHosts } from "./multi-host";
import { pickerFor } from "./primary-picker";
import { SilentHost } from "./silent-host";
import { skipWithoutDatabase } from "./testing";

// A multi-host URL on the one test server: the primary is found past hosts that refuse, and with
// no primary at all a query fails at once as a refused connection instead of hanging.

function withHosts(base: string, hosts: string): string {
  const schemeEnd = base.indexOf("://") + 3;
  const authority = base.slice(schemeEnd).split(/[/?]/)[0] ?? "";
  const at = authority.lastIndexOf("@");
  return `${base.slice(0, schemeEnd)}${at >= 0 ? authority.slice(0, at + 1) : ""}${hosts}${base.slice(schemeEnd + authority.length)}`;
}

describe.skipIf(skipWithoutDatabase())("multi-host URLs on a real server", () => {
  const base = env().TEST_DATABASE_URL ?? "";
  const server = (base.slice(base.indexOf("://") + 3).split(/[/?]/)[0] ?? "").split("@").pop() ?? "";

  it("reaches the primary named after a host that refuses connections", async () => {
    const database = openPostgres(withHosts(base, `127.0.0.1:1,${server}`), { max: 2, connectTimeoutSeconds: 2 });
    try {
      const rows = resultRows<{ standby: boolean }>(await database.db.execute(sql`select pg_is_in_recovery() as standby`));
      expect(rows[0]?.standby).toBe(false);
    } finally {
      await database.close();
    }
  });

  it("shares one discovery among concurrent connections, and asks the known primary alone after that", async () => {
    const silent = new SilentHost();
    const port = await silent.listen();
    const url = withHosts(base, `127.0.0.1:${port},${server}`);
    const picker = pickerFor(url, urlHosts(url), probeTimeoutFor(env().ENFORCEMENT_DEADLINE_MS));
    const database = openPostgres(url, { max: 8, connectTimeoutSeconds: 2 });
    try {
      await Promise.all(Array.from({ length: 8 }, () => database.db.execute(sql`select pg_sleep(0.05)`)));
      // Eight new connections, one discovery asking both hosts (the real one answered first).
      expect(picker.stats).toEqual({ discoveries: 1, probes: 2 });
      await database.destroy?.();
      // Past the time a discovery's answer is reused.
      await new Promise((r) => setTimeout(r, 300));
      const again = openPostgres(url, { max: 1, connectTimeoutSeconds: 2 });
      await again.db.execute(sql`select 1`);
      await again.close();
      // The last primary answered as primary: the silent host was not asked again.
      expect(picker.stats).toEqual({ discoveries: 2, probes: 3 });
      await expect.poll(() => silent.open.size).toBe(0);
    } finally {
      await database.close();
      await silent.close();
    }
  });

  it("fails fast, as a connection failure, when no host is a primary", async () => {
    const database = openPostgres(withHosts(base, "127.0.0.1:1,127.0.0.1:2"), { max: 1, connectTimeoutSeconds: 2 });
    const started = Date.now();
    try {
      const error = await database.db.execute(sql`select 1`).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(classifyFailure(error)).toBe("connection");
      expect(Date.now() - started).toBeLessThan(5000);
    } finally {
      await database.close();
    }
  });
});
