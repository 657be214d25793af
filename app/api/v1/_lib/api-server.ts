import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { apiError, MAX_BODY_BYTES, openApiDocument } from "@/lib/http";
import { guardMethods } from "@/lib/http/method-guard";
import { answerMethod } from "@/lib/http/methods";
import { checkUrl } from "@/lib/http/strict-input";
import { logError } from "@/lib/log/redact";
import { securityHeaders } from "@/lib/security/headers";
import type { ApiDeps } from "./deps";
import { handleHealth } from "./health-handler";
import { handleReserve } from "./reserve-handler";
import { handleResolve } from "./resolve-handler";
import { handleEndpointStatus } from "./status-handler";

// The enforcement API on node:http, without Next (npm run api): the same handlers as the routes of
// app/api/v1, the same URL check, method table and security headers as proxy.ts, the same OpenAPI
// document. Next's request handling and proxy cost more than a reservation; services call this.

/** The OpenAPI document, built once: it holds no data. */
let openApiBody: string | undefined;
function openApi(): Response {
  openApiBody ??= JSON.stringify(openApiDocument());
  return new Response(openApiBody, { headers: { "content-type": "application/json", "cache-control": "public, max-age=300" } });
}

const RESOLVE = /^\/api\/v1\/reservations\/([^/]+)\/(settle|release)$/;
const STATUS = /^\/api\/v1\/endpoints\/([^/]+)$/;

/** The answer of the route for a path and method the method table already let through. */
function route(request: Request, pathname: string, deps: ApiDeps): Promise<Response> {
  const method = request.method === "HEAD" ? "GET" : request.method;
  if (method === "POST" && pathname === "/api/v1/reservations") return handleReserve(request, deps);
  const resolve = RESOLVE.exec(pathname);
  if (method === "POST" && resolve?.[1] && (resolve[2] === "settle" || resolve[2] === "release")) {
    return handleResolve(request, decodeURIComponent(resolve[1]), resolve[2], deps);
  }
  const status = STATUS.exec(pathname);
  if (method === "GET" && status?.[1]) return handleEndpointStatus(request, decodeURIComponent(status[1]), deps);
  if (method === "GET" && pathname === "/api/v1/openapi.json") return Promise.resolve(openApi());
  if (method === "GET" && pathname === "/api/health") return handleHealth(deps);
  return Promise.resolve(apiError(404, "not_found", "no such route; this server answers the enforcement API under /api/v1"));
}

/** The body, read up to one byte past the limit: readJsonBody then answers 413 without reading more. */
async function readCappedBody(req: IncomingMessage): Promise<Uint8Array<ArrayBuffer> | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk));
    chunks.push(buffer);
    size += buffer.byteLength;
    if (size > MAX_BODY_BYTES) {
      req.resume();
      break;
    }
  }
  return size === 0 ? undefined : new Uint8Array(Buffer.concat(chunks).subarray(0, MAX_BODY_BYTES + 1));
}

export type ApiServerOptions = {
  deps: ApiDeps;
  /** Called with each request as it arrived (tests of HTTP clients record what was sent). */
  observe?: (request: { method: string; path: string; body: string }) => void;
};

function send(res: ServerResponse, status: number, headers: Record<string, string>, body: Uint8Array | string, head: boolean): void {
  res.writeHead(status, { ...headers, "content-length": String(Buffer.byteLength(body)) });
  res.end(head ? undefined : body);
}

/** The request listener: everything the API server does with one request. */
export function apiRequestListener(options: ApiServerOptions): (req: IncomingMessage, res: ServerResponse) => void {
  const headersOf = (req: IncomingMessage) => {
    const forwarded = req.headers["x-forwarded-proto"];
    const https = (Array.isArray(forwarded) ? forwarded[0] : forwarded)?.split(",")[0]?.trim() === "https";
    return securityHeaders({ https });
  };
  return (req, res) => {
    void (async () => {
      const security = headersOf(req);
      const method = req.method ?? "GET";
      const head = method === "HEAD";
      const target = req.url ?? "/";
      const url = new URL(target.startsWith("/") ? target : "/", "http://api.local");
      // The input boundary for the path and query, as proxy.ts: a 400 naming the part.
      const bad = checkUrl(url.pathname, url.search);
      if (bad) {
        req.resume();
        return send(res, 400, { ...security, "content-type": "application/json", "cache-control": "no-store" }, JSON.stringify({ error: { code: "invalid_input", message: bad.message } }), head);
      }
      const refused = answerMethod(url.pathname, method);
      if (refused) {
        req.resume();
        return send(res, refused.status, { ...security, ...refused.headers }, refused.body, head);
      }
      const body = method === "GET" || head ? undefined : await readCappedBody(req);
      options.observe?.({ method, path: url.pathname, body: body ? Buffer.from(body).toString("utf8") : "" });
      const headers = new Headers();
      for (const [name, value] of Object.entries(req.headers)) {
        if (typeof value === "string") headers.set(name, value);
        else if (Array.isArray(value)) for (const v of value) headers.append(name, v);
      }
      const request = new Request(`http://${req.headers.host ?? "api.local"}${url.pathname}${url.search}`, { method, headers, body });
      const response = await route(request, url.pathname, options.deps);
      const out: Record<string, string> = { ...security };
      response.headers.forEach((value, name) => {
        out[name] = value;
      });
      send(res, response.status, out, new Uint8Array(await response.arrayBuffer()), head);
    })().catch((error: unknown) => {
      logError("api server: request failed", error);
      if (!res.headersSent) send(res, 500, { "content-type": "application/json" }, JSON.stringify({ error: { code: "internal", message: "internal error" } }), false);
      else res.destroy();
    });
  };
}

export type RunningApiServer = { server: Server; url: string; close: () => Promise<void> };

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
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
