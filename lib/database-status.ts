import { sql } from "drizzle-orm";
import { type Db, resultRows } from "@/db/client";

// Which database node the dashboard is talking to, and whether it answers at all. On a Patroni
// cluster the multi-host URL follows the primary (db/multi-host.ts); while it fails over no node
// accepts the pool's connections and a query waits until one does. The dashboard asks here first,
// with a short bound, and shows "failing over" instead of waiting into an error page.

/** Not ok: no node answered within the bound (timedOut), or the error the query failed with. */
export type DatabaseStatus = { ok: true; role: "primary" | "standby"; server: string } | { ok: false; message: string; timedOut: boolean; error?: unknown };

export const PROBE_TIMEOUT_MS = 2000;

export async function probeDatabase(db: Db, timeoutMs = PROBE_TIMEOUT_MS): Promise<DatabaseStatus> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<DatabaseStatus>((resolve) => {
    timer = setTimeout(() => resolve({ ok: false, timedOut: true, message: `no database node answered within ${timeoutMs} ms` }), timeoutMs);
  });
  const probe = (async (): Promise<DatabaseStatus> => {
    try {
      const row = resultRows<{ standby: boolean; addr: string | null; port: number | null }>(
        await db.execute(sql`select pg_is_in_recovery() as standby, host(inet_server_addr()) as addr, inet_server_port() as port`),
      )[0];
      if (!row) return { ok: false, timedOut: false, message: "the database returned no row" };
      // No address: a Unix socket or the embedded database.
      const server = row.addr ? `${row.addr}:${row.port ?? ""}` : "local";
      return { ok: true, role: row.standby ? "standby" : "primary", server };
    } catch (error) {
      return { ok: false, timedOut: false, error, message: error instanceof Error ? error.message : String(error) };
    }
  })();
  try {
    return await Promise.race([probe, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
