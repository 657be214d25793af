// Multi-host URLs (postgres://user@h1:5441,h2:5442,h3:5443/db), for a Patroni cluster whose
// primary moves. postgres.js 3.4.9 parses the comma-separated host list itself (index.js
// parseUrl/parseOptions) and, on every new connection, tries the next host in turn
// (connection.js connect: hostIndex = (hostIndex + 1) % hosts). target_session_attrs, from the
// option or the URL query, decides whether a connection is kept (connection.js tryNext).
//
// Its "read-write" is not libpq's: it only checks default_transaction_read_only, which a hot
// standby reports as "off" (PostgreSQL 14+ send it at start-up, so postgres.js never runs its
// own `show transaction_read_only` check). A "read-write" pool would therefore keep connections
// to a standby, where every reservation fails. "primary" checks in_hot_standby, which a standby
// reports as "on", and skips to the next host. So a multi-host URL asking for read-write, or for
// nothing, is opened as "primary". A reservation on a standby could not be granted anyway
// (Postgres refuses writes there); this makes the pool reach the primary instead of failing.

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

/** postgres.js options for a URL: only multi-host URLs get any. */
export function multiHostOptions(url: string): { target_session_attrs?: SessionAttrs } {
  if (urlHosts(url).length < 2) return {};
  const asked = requestedAttrs(url);
  if (asked === undefined || asked === "read-write") return { target_session_attrs: "primary" };
  return {};
}

/** host:port,host:port/db for logs, without credentials; `new URL` rejects multi-host URLs. */
export function describeDatabaseUrl(url: string): string {
  const afterScheme = url.slice(url.indexOf("://") + 3);
  const pathAndQuery = afterScheme.slice((afterScheme.split(/[/?]/)[0] ?? "").length);
  const database = pathAndQuery.startsWith("/") ? (pathAndQuery.slice(1).split("?")[0] ?? "") : "";
  const hosts = urlHosts(url).map((h) => (/:\d+$/.test(h) ? h : `${h}:5432`));
  return `${hosts.join(",")}/${database}`;
}
