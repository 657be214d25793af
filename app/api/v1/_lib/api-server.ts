import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { type ApiAnswer, type ApiRequest, errorAnswer, MAX_BODY_BYTES, openApiDocument } from "@/lib/http";
import { MAX_BULK_BODY_BYTES } from "@/lib/http/schemas";
import { guardMethods, isHttps } from "@/lib/http/method-guard";
import { answerMethod } from "@/lib/http/methods";
import { checkUrl } from "@/lib/http/strict-input";
import { logError } from "@/lib/log/redact";
import { securityHeaders } from "@/lib/security/headers";
import { handleAssignPlan, handleAssignPlans, handleGetAccount } from "./accounts-handler";
import type { ApiDeps } from "./deps";
import { handleHealth } from "./health-handler";
import { handleReserve } from "./reserve-handler";
import { handleResolve } from "./resolve-handler";
import { handleEndpointStatus } from "./status-handler";

// The enforcement API on node:http, without Next (npm run api): the same handlers as the routes of
// app/api/v1, the same URL check, method table and security headers as proxy.ts, the same OpenAPI
// document. Next's request handling and proxy cost more than a reservation; services call this.
// The handlers read an ApiRequest made from node's own request and give a plain answer: no fetch
// Request, Response or Headers on the way, which had cost more CPU than the rest of a reservation.

/** The OpenAPI document, built once: it holds no data. */
let openApiAnswer: ApiAnswer | undefined;
function openApi(): ApiAnswer {
  openApiAnswer ??= {
    status: 200,
    headers: { "content-type": "application/json", "cache-control": "public, max-age=300" },
    body: JSON.stringify(openApiDocument()),
  };
  return openApiAnswer;
}

const RESOLVE = /^\/api\/v1\/reservations\/([^/]+)\/(settle|release)$/;
const STATUS = /^\/api\/v1\/endpoints\/([^/]+)$/;
const ACCOUNT = /^\/api\/v1\/accounts\/([^/]+)$/;
const BULK = "/api/v1/accounts:bulk";

/** The answer of the route for a path and method (HEAD read as GET) the method table already let through. */
function route(method: string, pathname: string, request: ApiRequest, deps: ApiDeps): Promise<ApiAnswer> {
  if (method === "POST" && pathname === "/api/v1/reservations") return handleReserve(request, deps);
  const resolve = RESOLVE.exec(pathname);
  if (method === "POST" && resolve?.[1] && (resolve[2] === "settle" || resolve[2] === "release")) {
    return handleResolve(request, decodeURIComponent(resolve[1]), resolve[2], deps);
  }
  const status = STATUS.exec(pathname);
  if (method === "GET" && status?.[1]) return handleEndpointStatus(request, decodeURIComponent(status[1]), deps);
  const account = ACCOUNT.exec(pathname);
  if (account?.[1] && (method === "GET" || method === "PUT")) {
    const id = decodeURIComponent(account[1]);
    return method === "GET" ? handleGetAccount(request, id, deps) : handleAssignPlan(request, id, deps);
  }
  if (method === "POST" && pathname === BULK) return handleAssignPlans(request, deps);
  if (method === "GET" && pathname === "/api/v1/openapi.json") return Promise.resolve(openApi());
  if (method === "GET" && pathname === "/api/health") return handleHealth(deps);
  return Promise.resolve(errorAnswer(404, "not_found", "no such route; this server answers the enforcement API under /api/v1"));
}

/**
 * The body, read up to one byte past the limit: parseJsonBody then answers 413 without keeping
 * more (the rest is drained unread, so the 413 reaches the client). Listeners rather than an async
 * iterator: the iterator's machinery cost more than the read.
 */
function readCappedBody(req: IncomingMessage, limit: number): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const done = () => {
      if (settled) return;
      settled = true;
      resolve(size === 0 ? undefined : Buffer.concat(chunks, Math.min(size, limit + 1)));
    };
    const onData = (chunk: Buffer) => {
      chunks.push(chunk);
      size += chunk.byteLength;
      if (size <= limit) return;
      req.off("data", onData);
      req.resume();
      done();
    };
    req.on("data", onData);
    req.once("end", done);
    req.once("error", (error) => {
      settled = true;
      reject(error);
    });
    // A client gone before the end: answered as clientGone. Every request closes, most after their
    // end: the error is made only for one that had none (an Error's stack cost 4 µs a request).
    req.once("close", () => {
      if (settled) return;
      settled = true;
      reject(Object.assign(new Error("aborted"), { code: "ECONNRESET" }));
    });
  });
}

/**
 * The path and query of a request target, or null for one this server does not take: Next answers
 * `//host/...` and `\` paths with a redirect and folds dot segments, which a proxy's path rule in
 * front would not expect, so they are refused here rather than read as another path. The
 * absolute form (`http://host/path`, RFC 9112) is read for its path.
 */
export function requestTarget(raw: string): { pathname: string; search: string } | null {
  const target = /^https?:\/\/[^/?#]*/i.test(raw) ? raw.replace(/^https?:\/\/[^/?#]*/i, "") || "/" : raw;
  if (!target.startsWith("/") || target.startsWith("//")) return null;
  const q = target.indexOf("?");
  const pathname = q < 0 ? target : target.slice(0, q);
  if (pathname.includes("\\") || /(^|\/)(\.|%2e){1,2}(\/|$)/i.test(pathname) || pathname.includes("#")) return null;
  return { pathname, search: q < 0 ? "" : target.slice(q) };
}

/** A header as Headers.get reads it: node joins most repeated headers already, the rest are joined here. */
function headerOf(req: IncomingMessage, name: string): string | null {
  const value = req.headers[name];
  if (value === undefined) return null;
  return Array.isArray(value) ? value.join(", ") : value;
}

/** A client that went away mid-request: nothing to answer, nothing worth a log line. */
function clientGone(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === "ECONNRESET" || code === "ERR_STREAM_PREMATURE_CLOSE" || (error instanceof Error && error.message === "aborted");
}

export type ApiServerOptions = {
  deps: ApiDeps;
  /** Called with each request as it arrived (tests of HTTP clients record what was sent). */
  observe?: (request: { method: string; path: string; body: string }) => void;
};

/** Writes an answer in one object of headers: the security headers, the answer's, its length. */
function send(res: ServerResponse, security: Record<string, string>, answer: ApiAnswer, head: boolean): void {
  res.writeHead(answer.status, { ...security, ...answer.headers, "content-length": String(Buffer.byteLength(answer.body)) });
  res.end(head ? undefined : answer.body);
}

/** The request listener: everything the API server does with one request. */
export function apiRequestListener(options: ApiServerOptions): (req: IncomingMessage, res: ServerResponse) => void {
  // The security headers depend on the request only through https: built once for each.
  const securityFor = { http: securityHeaders({ https: false }), https: securityHeaders({ https: true }) };
  return (req, res) => {
    void (async () => {
      const security = isHttps(req) ? securityFor.https : securityFor.http;
      const method = req.method ?? "GET";
      const head = method === "HEAD";
      /** Answered at the edge: the body is not read. */
      const refuse = (status: number, code: string, message: string) => {
        req.resume();
        send(res, security, errorAnswer(status, code, message), head);
      };
      const url = requestTarget(req.url ?? "/");
      if (!url) return refuse(400, "invalid_input", "the request path must be a plain /path: no //, \\ or . and .. segments");
      // The input boundary for the path and query, as proxy.ts: a 400 naming the part.
      const bad = checkUrl(url.pathname, url.search);
      if (bad) return refuse(400, "invalid_input", bad.message);
      // Only the API lives here: no page's methods apply to any other path.
      if (!url.pathname.startsWith("/api/")) return refuse(404, "not_found", "no such route; this server answers the enforcement API under /api/v1");
      const refused = answerMethod(url.pathname, method);
      if (refused) {
        req.resume();
        return send(res, security, refused, head);
      }
      // A bulk assignment is the one body allowed past 16 KiB (its handler checks the same limit).
      const limit = url.pathname === BULK ? MAX_BULK_BODY_BYTES : MAX_BODY_BYTES;
      const body = method === "GET" || head ? undefined : await readCappedBody(req, limit);
      options.observe?.({ method, path: url.pathname, body: body ? body.toString("utf8") : "" });
      // The query as a URL reads it: a fragment (which a client should not send) is no part of it.
      const hash = url.search.indexOf("#");
      const search = hash < 0 ? url.search : url.search.slice(0, hash);
      const request: ApiRequest = { header: (name) => headerOf(req, name), search, body };
      const answer = await route(head ? "GET" : method, url.pathname, request, options.deps);
      send(res, security, answer, head);
    })().catch((error: unknown) => {
      if (clientGone(error)) return void res.destroy();
      logError("api server: request failed", error);
      if (!res.headersSent)
        send(
          res,
          {},
          { status: 500, headers: { "content-type": "application/json" }, body: JSON.stringify({ error: { code: "internal", message: "internal error" } }) },
          false,
        );
      else res.destroy();
    });
  };
}

export type RunningApiServer = {
  server: Server;
  url: string;
  /** Stops taking connections, lets requests in flight finish (at most `graceMs`), then closes. */
  close: (graceMs?: number) => Promise<void>;
};

/** Listens on `port` (0: a free one) and `host`. */
export async function startApiServer(options: ApiServerOptions & { port: number; host: string }): Promise<RunningApiServer> {
  const server = createServer({ keepAliveTimeout: 65_000 }, apiRequestListener(options));
  // TRACE and CONNECT: 405 with Allow, as on the dashboard's server.
  guardMethods(server);
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.host, () => resolve());
  });
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : options.port;
  const host = options.host.includes(":") ? `[${options.host}]` : options.host;
  return {
    server,
    url: `http://${host}:${port}`,
    close: (graceMs = 0) =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
        // Keep-alive connections with a request in flight close once it is answered.
        setTimeout(() => server.closeAllConnections(), graceMs).unref();
      }),
  };
}
