// Which HTTP methods each path answers, and the answer to any other: 405 with an Allow header that
// lists exactly the path's methods (a JSON error under /api, text elsewhere), 204 with the same
// Allow for OPTIONS. Next alone answered a method a route does not export with a 405 without Allow,
// and TRACE with a 500 and a stack trace in the log: Next builds a fetch Request of every request
// before proxy.ts or a route runs, and the Fetch standard forbids TRACE, so that construction
// throws. proxy.ts answers what it can see; lib/http/method-guard.ts answers TRACE (and CONNECT)
// on the Node server before Next sees it. Pure data and functions: no Next, no node:http.

export const ROUTE_HANDLER_METHODS = ["GET", "HEAD", "OPTIONS", "POST", "PUT", "DELETE", "PATCH"] as const;
export type RouteMethod = (typeof ROUTE_HANDLER_METHODS)[number];

/**
 * Every route file of app/ and the methods its handlers answer (app/http-methods.int.test.ts holds
 * this table to the methods each file exports). HEAD is implied by GET and OPTIONS by every path,
 * as Next does for route handlers. /refusals/export also exports GET, only to answer it with 405.
 */
export const ROUTE_METHODS: Readonly<Record<string, readonly RouteMethod[]>> = {
  "/api/auth/[...nextauth]": ["GET", "POST"],
  "/api/demo/subscribe": ["POST"],
  "/api/health": ["GET"],
  "/api/metrics": ["GET"],
  "/api/v1/accounts/[account]": ["GET", "PUT"],
  "/api/v1/accounts:bulk": ["POST"],
  "/api/v1/endpoints/[key]": ["GET"],
  "/api/v1/openapi.json": ["GET"],
  "/api/v1/reservations": ["POST"],
  "/api/v1/reservations/[id]/release": ["POST"],
  "/api/v1/reservations/[id]/settle": ["POST"],
  "/refusals/export": ["POST"],
};

/** Pages render for GET and HEAD and run their server actions (and forms without JavaScript) by POST. */
export const PAGE_METHODS: readonly RouteMethod[] = ["GET", "POST"];

/** Methods the Fetch standard forbids (undici's Request throws): Next cannot hand them to any code of ours. */
export const FETCH_FORBIDDEN_METHODS: ReadonlySet<string> = new Set(["CONNECT", "TRACE", "TRACK"]);

export type PathMethods = {
  /** api: a route under /api; route: another route file (both answer errors as JSON); page: everything else Next renders; internal: Next's own files. */
  kind: "api" | "route" | "page" | "internal";
  /** The Allow header's methods, sorted as Next sorts them. */
  allow: readonly string[];
};

function withImplied(methods: readonly string[]): string[] {
  const all = new Set([...methods, "OPTIONS"]);
  if (all.has("GET")) all.add("HEAD");
  return [...all].sort();
}

function routePattern(route: string): RegExp {
  const source = route
    .split("/")
    .map((segment) => {
      if (/^\[\.\.\.[^\]]+\]$/.test(segment)) return ".+";
      if (/^\[[^\]]+\]$/.test(segment)) return "[^/]+";
      return segment.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    })
    .join("/");
  return new RegExp(`^${source}$`);
}

type Route = { route: string; pattern: RegExp; allow: string[] };
const ROUTES: Route[] = Object.entries(ROUTE_METHODS).map(([route, methods]) => ({ route, pattern: routePattern(route), allow: withImplied(methods) }));
// The routes without a parameter by their path, as the patterns' scan finds them: the paths
// called most (a reservation, health) are one lookup, not up to a dozen patterns.
const BY_PATH = new Map(
  ROUTES.filter((r) => !r.route.includes("[")).flatMap((r) => {
    const found = ROUTES.find((c) => c.pattern.test(r.route));
    return found ? [[r.route, found] as const] : [];
  }),
);
const PAGE_ALLOW = withImplied(PAGE_METHODS);
const INTERNAL_ALLOW = ["GET", "HEAD"];

function routeFor(pathname: string): Route | undefined {
  const path = pathname.length > 1 && pathname.endsWith("/") ? pathname.slice(0, -1) : pathname;
  return BY_PATH.get(path) ?? ROUTES.find((r) => r.pattern.test(path));
}

/** The route file (as written in ROUTE_METHODS) that answers a path, or undefined. */
export function routeOf(pathname: string): string | undefined {
  return routeFor(pathname)?.route;
}

/** The methods a path answers; null for a path under /api that no route answers (Next's 404). */
export function methodsOf(pathname: string): PathMethods | null {
  if (pathname.startsWith("/_next/") || pathname.startsWith("/__nextjs")) return { kind: "internal", allow: INTERNAL_ALLOW };
  const route = routeFor(pathname);
  const api = pathname === "/api" || pathname.startsWith("/api/");
  if (route !== undefined) return { kind: api ? "api" : "route", allow: route.allow };
  if (api) return null;
  return { kind: "page", allow: PAGE_ALLOW };
}

export type MethodAnswer = { status: 204 | 404 | 405; headers: Record<string, string>; body: string };

function jsonError(status: 404 | 405, code: string, message: string, headers: Record<string, string>): MethodAnswer {
  return {
    status,
    headers: { ...headers, "content-type": "application/json", "cache-control": "no-store" },
    body: JSON.stringify({ error: { code, message } }),
  };
}

/**
 * The answer to `method` on `pathname` when it is not the route's or page's to give, or null to
 * let the request through: 204 with Allow for OPTIONS, 405 with Allow for a method the path does
 * not answer, 404 for a method Next cannot carry to a path under /api that no route answers.
 * Next's own files (/_next/) are left to Next but for the methods it cannot carry.
 */
export function answerMethod(pathname: string, method: string): MethodAnswer | null {
  const forbidden = FETCH_FORBIDDEN_METHODS.has(method);
  const paths = methodsOf(pathname);
  if (paths === null) return forbidden ? jsonError(404, "not_found", "no such route", {}) : null;
  if (paths.kind === "internal" && !forbidden) return null;
  // A method the path answers passes (OPTIONS is answered here, below).
  if (method !== "OPTIONS" && paths.allow.includes(method)) return null;
  const allow = paths.allow.join(", ");
  if (method === "OPTIONS" && paths.allow.includes("OPTIONS")) return { status: 204, headers: { allow, "cache-control": "no-store" }, body: "" };
  const message = `${method.slice(0, 20)} is not allowed here; this ${paths.kind === "page" ? "page" : "route"} answers ${allow}`;
  if (paths.kind === "api" || paths.kind === "route") return jsonError(405, "method_not_allowed", message, { allow });
  return {
    status: 405,
    headers: { allow, "content-type": "text/plain; charset=utf-8", "cache-control": "no-store" },
    body: `Method not allowed: ${message}\n`,
  };
}
