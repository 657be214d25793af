import net from "node:net";
import { connectTo, failedSocket, parseHost, pickerFor } from "./primary-picker";

// Multi-host URLs (postgres://user@h1:5441,h2:5442,h3:5443/db), for a Patroni cluster whose
// primary moves. postgres.js 3.4.9 parses the comma-separated host list itself (index.js
// parseUrl/parseOptions), tries the next host on each new connection (connection.js connect) and
// checks target_session_attrs when a connection starts (connection.js tryNext). Two problems,
// both seen here against the cluster of `npm run ha`:
//
// - Its "read-write" is not libpq's: it only checks default_transaction_read_only, which a hot
//   standby reports as "off" (PostgreSQL 14+ send it at start-up, so postgres.js never runs its
//   own `show transaction_read_only`). A read-write pool connects to a standby.
// - Even "primary" is not kept after a connection loss with queries queued: once the primary was
//   killed, reconnected pools sat on a standby for good, every write failing with 25006
//   (porsager/postgres#815 reports the same). Reservations then fail closed, but never resume.
//
// So for a multi-host URL the host is chosen here: postgres.js gets a `socket` function (its
// documented way to supply the connection) that connects to the host the process's discovery
// found answering `pg_is_in_recovery()` false (db/primary-picker.ts). postgres.js itself sees a
// single host, with target_session_attrs=primary as a second check. While no node is primary,
// connections fail as refused (or wait while a promotion is under way): reservations are
// unavailable within the deadline, and the next attempt asks again. postgres.js starts its
// connect_timeout only once the socket function returns, so the pick is bounded here.

export type SessionAttrs = "read-write" | "read-only" | "primary" | "standby" | "prefer-standby";

/** The hosts part of a postgres URL, split on commas: ["127.0.0.1:5441", ...]. */
export function urlHosts(url: string): string[] {
  const afterScheme = url.slice(url.indexOf("://") + 3);
  const authority = afterScheme.split(/[/?]/)[0] ?? "";
  const hosts = authority.slice(authority.lastIndexOf("@") + 1);
  return hosts.split(",").filter((h) => h.length > 0);
}

function requestedAttrs(url: string): string | undefined {
  const query = url.indexOf("?");
  if (query < 0) return undefined;
  return new URLSearchParams(url.slice(query + 1)).get("target_session_attrs") ?? undefined;
}

/**
 * The sockets a pool was handed, so that a pool destroyed while it connects (an enforcement lane
 * past its deadline) leaves nothing connected: postgres.js completes a connection whose pick
 * outlived its pool and leaves it idle, and only ends sockets that are already open.
 */
export class PoolSockets {
  private readonly open = new Set<net.Socket>();
  abandoned = false;

  track(socket: net.Socket): net.Socket {
    this.open.add(socket);
    socket.once("close", () => this.open.delete(socket));
    return socket;
  }

  /** Destroys every socket of the pool, and every one a pick still under way would hand it. */
  abandon(): void {
    this.abandoned = true;
    // With an error: a socket that just closes while its first query waits is reconnected.
    for (const socket of this.open) socket.destroy(Object.assign(new Error("the pool was destroyed"), { code: "CONNECTION_DESTROYED" }));
    this.open.clear();
  }
}

// While every host answers as a standby (a promotion under way), a pick asks again this often.
const PROMOTION_POLL_MS = 250;

/**
 * A `socket` function for postgres.js that connects to whichever host of the URL is the primary,
 * never to a standby: postgres.js's own target_session_attrs check does not hold after a
 * reconnect, and a pool that lands on a standby stays there (seen in npm run test:ha). The
 * primary comes from the process's one discovery for the URL (db/primary-picker.ts). With no
 * primary the connection fails at once as refused; while a promotion is under way it asks again
 * until `pickMs` have passed. A pool that is gone by the time the answer comes gets no socket.
 */
export function primarySocket(url: string, options: { pickMs: number; probeTimeoutMs: number; sockets: PoolSockets }): () => Promise<net.Socket> {
  const picker = pickerFor(url, urlHosts(url), options.probeTimeoutMs);
  const abandoned = () => failedSocket("CONNECTION_DESTROYED", "the pool was closed while its connection was being set up");
  return async () => {
    const until = Date.now() + options.pickMs;
    for (;;) {
      const found = await picker.discover();
      if (options.sockets.abandoned) return abandoned();
      if (found.primary) return options.sockets.track(connectTo(found.primary));
      if (found.standbys === 0 || Date.now() + PROMOTION_POLL_MS > until) {
        return failedSocket("CONNECTION_NO_PRIMARY", "no host of the URL answered as primary");
      }
      await new Promise((r) => setTimeout(r, PROMOTION_POLL_MS));
      if (options.sockets.abandoned) return abandoned();
    }
  };
}

// Each question to a host is given up after this, well inside the enforcement deadline (2 s by
// default): a host that accepts TCP and never answers must not use the caller's whole deadline.
export function probeTimeoutFor(deadlineMs: number): number {
  return Math.min(750, Math.max(200, Math.round(deadlineMs * 0.3)));
}

/** postgres.js options for a URL: only multi-host URLs get any. */
export function multiHostOptions(
  url: string,
  options: { connectTimeoutSeconds: number; probeTimeoutMs: number; sockets: PoolSockets },
): { target_session_attrs?: SessionAttrs; socket?: () => Promise<net.Socket>; host?: string; port?: number } {
  const hosts = urlHosts(url);
  if (hosts.length < 2) return {};
  const asked = requestedAttrs(url);
  if (asked !== undefined && asked !== "read-write" && asked !== "primary") return {};
  const first = parseHost(hosts[0] ?? "");
  return {
    socket: primarySocket(url, { pickMs: options.connectTimeoutSeconds * 1000, probeTimeoutMs: options.probeTimeoutMs, sockets: options.sockets }),
    // One host as far as postgres.js knows: with several it swallows connection errors and loops.
    host: first.host,
    port: first.port,
    target_session_attrs: "primary",
  };
}

/** host:port,host:port/db for logs, without credentials; `new URL` rejects multi-host URLs. */
export function describeDatabaseUrl(url: string): string {
  const afterScheme = url.slice(url.indexOf("://") + 3);
  const pathAndQuery = afterScheme.slice((afterScheme.split(/[/?]/)[0] ?? "").length);
  const database = pathAndQuery.startsWith("/") ? (pathAndQuery.slice(1).split("?")[0] ?? "") : "";
  const hosts = urlHosts(url).map((h) => (/:\d+$/.test(h) ? h : `${h}:5432`));
  return `${hosts.join(",")}/${database}`;
}
