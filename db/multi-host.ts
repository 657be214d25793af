import net from "node:net";
import postgres from "postgres";

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
// documented way to supply the connection) that asks every host, in parallel, whether it is in
// recovery and connects to the one that is not. postgres.js itself sees a single host, with
// target_session_attrs=primary as a second check. While no node is primary, connections fail
// as refused (or wait while a promotion is under way): reservations are unavailable within the
// deadline, and the next attempt asks again.

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

type HostPort = { host: string; port: number };

function parseHost(h: string): HostPort {
  const match = /^(.*?)(?::(\d+))?$/.exec(h);
  return { host: match?.[1] || "localhost", port: Number(match?.[2] ?? 5432) };
}

/** The same URL naming one host, without target_session_attrs (meaningless for one host). */
function singleHostUrl(url: string, host: string): string {
  const schemeEnd = url.indexOf("://") + 3;
  const authority = url.slice(schemeEnd).split(/[/?]/)[0] ?? "";
  const at = authority.lastIndexOf("@");
  const rest = url.slice(schemeEnd + authority.length);
  const q = rest.indexOf("?");
  let tail = rest;
  if (q >= 0) {
    const params = new URLSearchParams(rest.slice(q + 1));
    params.delete("target_session_attrs");
    tail = rest.slice(0, q) + (params.size > 0 ? `?${params.toString()}` : "");
  }
  return `${url.slice(0, schemeEnd)}${at >= 0 ? authority.slice(0, at + 1) : ""}${host}${tail}`;
}

type Role = "primary" | "standby" | "unreachable";

/** What the host is now: asked with a one-connection client of its own. */
async function roleOf(url: string, host: string, timeoutSeconds: number): Promise<Role> {
  const probe = postgres(singleHostUrl(url, host), {
    max: 1,
    connect_timeout: timeoutSeconds,
    fetch_types: false,
    onnotice: () => {},
    connection: { application_name: "ceilings-primary-probe" },
  });
  let timer: NodeJS.Timeout | undefined;
  try {
    // Bounded here too: a pool's every new connection waits for this answer.
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error("probe timed out")), (timeoutSeconds + 1) * 1000);
    });
    const [row] = await Promise.race([probe<{ standby: boolean }[]>`select pg_is_in_recovery() as standby`, timeout]);
    return row?.standby === false ? "primary" : "standby";
  } catch {
    return "unreachable";
  } finally {
    clearTimeout(timer);
    await probe.end({ timeout: 0 }).catch(() => undefined);
  }
}

/**
 * A `socket` function for postgres.js that connects to whichever host of the URL is the primary,
 * never to a standby: postgres.js's own target_session_attrs check does not hold after a
 * reconnect, and a pool that lands on a standby stays there (seen in npm run test:ha). With no
 * primary it connects to a host that did not answer, which fails like any refused connection;
 * when every host answers as a standby (a promotion under way) it asks again shortly.
 * Connections opened together share one round of questions.
 */
export function primarySocket(url: string, timeoutSeconds: number): () => Promise<net.Socket> {
  const hosts = urlHosts(url);
  let asking: Promise<Role[]> | undefined;
  const roles = () => {
    asking ??= Promise.all(hosts.map((h) => roleOf(url, h, timeoutSeconds))).finally(() => {
      asking = undefined;
    });
    return asking;
  };
  const open = (target: string) => {
    const { host, port } = parseHost(target);
    const socket = net.connect(port, host);
    // postgres.js listens for errors while it uses the socket and drops every listener when it
    // closes it; an error arriving after that (a reset from a killed server) would otherwise
    // crash the process.
    socket.on("error", () => undefined);
    return socket;
  };
  return async () => {
    for (;;) {
      const answers = await roles();
      const primary = hosts[answers.indexOf("primary")];
      if (primary) return open(primary);
      const unreachable = hosts[answers.indexOf("unreachable")];
      if (unreachable) return open(unreachable);
      await new Promise((r) => setTimeout(r, 250));
    }
  };
}

/** postgres.js options for a URL: only multi-host URLs get any. */
export function multiHostOptions(
  url: string,
  connectTimeoutSeconds = 10,
): { target_session_attrs?: SessionAttrs; socket?: () => Promise<net.Socket>; host?: string; port?: number } {
  const hosts = urlHosts(url);
  if (hosts.length < 2) return {};
  const asked = requestedAttrs(url);
  if (asked !== undefined && asked !== "read-write" && asked !== "primary") return {};
  const first = parseHost(hosts[0] ?? "");
  return {
    socket: primarySocket(url, connectTimeoutSeconds),
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
