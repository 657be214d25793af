import { readdirSync } from "node:fs";
import { type IncomingMessage, Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { autoImplementMethods } from "next/dist/server/route-modules/app-route/helpers/auto-implement-methods";
import { isHTTPMethod } from "next/dist/server/web/http";
import { NextRequest } from "next/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { guardMethods } from "@/lib/http/method-guard";
import { PAGE_METHODS, ROUTE_HANDLER_METHODS, ROUTE_METHODS, routeOf } from "@/lib/http/methods";
import { rawRequest } from "@/lib/http/raw-http";
import { proxy } from "@/proxy";

// Every route file × every method, on a real HTTP server: unsupported methods answer 405 with an
// Allow header listing exactly the route's methods (a JSON error for routes), OPTIONS 204 with the
// same Allow, TRACE and CONNECT too, never a 500. The server does what `next start` does in front
// of our code, with Next's own pieces where they exist: the method guard on the node:http server
// (what instrumentation.ts installs), a NextRequest built of the request as Next builds one before
// proxy.ts (which throws for TRACE: Next then answers 500), proxy.ts itself, and Next's own method
// dispatch of a route module (autoImplementMethods: HEAD from GET, OPTIONS, and a 405 without
// Allow for a method the module lacks). A request that reaches a route's own handler is answered
// with a marker naming it rather than run: the handlers need Next's request scope and the live
// database, and e2e/http-methods.spec.ts calls them on a real `next start`.

const APP = path.join(process.cwd(), "app");
type Module = Record<string, unknown>;

/** Every route.ts under app/, as its URL pattern ("/api/v1/reservations/[id]/settle"). */
function routeFiles(dir = APP): { route: string; file: string }[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return routeFiles(full);
    if (entry.name !== "route.ts") return [];
    const segments = path
      .relative(APP, dir)
      .split(path.sep)
      .filter((s) => !/^\(.*\)$/.test(s));
    return [{ route: `/${segments.join("/")}`, file: full }];
  });
}

/** A URL path the route answers: each dynamic segment filled in. */
const samplePath = (route: string) => route.replace(/\[\.\.\.[^\]]+\]/g, "session").replace(/\[[^\]]+\]/g, "00000000-0000-4000-8000-000000000000");

const FILES = routeFiles();
const modules = new Map<string, Module>();

/** Next's handling of a request that proxy.ts let through, up to the route's own handler. */
async function next(request: NextRequest, pathname: string): Promise<Response> {
  const route = routeOf(pathname);
  if (route === undefined) {
    const api = pathname.startsWith("/api/");
    return new Response(api ? "not found" : "page", { status: api ? 404 : 200, headers: { "x-reached": api ? "404" : "page" } });
  }
  const userland = modules.get(route) ?? {};
  if (!isHTTPMethod(request.method)) return new Response(null, { status: 400 }); // Next's resolveHandler
  const handlers = autoImplementMethods(userland as Parameters<typeof autoImplementMethods>[0]);
  const handler = handlers[request.method];
  const own = userland[request.method] === handler ? request.method : request.method === "HEAD" && userland.GET === handler ? "GET" : undefined;
  if (own) return new Response(null, { status: 200, headers: { "x-reached": `${route} ${own}` } });
  return (handler as (r: NextRequest) => Response | Promise<Response>)(request);
}

async function send(res: ServerResponse, response: Response): Promise<void> {
  res.statusCode = response.status;
  response.headers.forEach((value, name) => res.setHeader(name, value));
  res.end(Buffer.from(await response.arrayBuffer()));
}

/** A node:http server in front of proxy.ts and the route modules, as `next start` is. */
class AppServer extends Server {}

function listener(req: IncomingMessage, res: ServerResponse): void {
  void (async () => {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    let request: NextRequest;
    try {
      // As NextRequestAdapter.fromNodeNextRequest and the proxy adapter do: for TRACE it throws.
      request = new NextRequest(url, { method: req.method, headers: req.headers as Record<string, string> });
    } catch (error) {
      res.statusCode = 500;
      res.end(`Internal Server Error: ${String(error)}`);
      return;
    }
    const answer = proxy(request);
    if (answer.headers.get("x-middleware-next") !== "1") return send(res, answer);
    return send(res, await next(request, url.pathname));
  })().catch((error: unknown) => {
    res.statusCode = 500;
    res.end(String(error));
  });
}

// A session cookie, so that proxy.ts lets a page request through instead of sending it to sign in.
const raw = (port: number, method: string, target: string) => rawRequest(port, method, target, { cookie: "next-auth.session-token=x" });

const allowOf = (methods: readonly string[]) => {
  const all = new Set([...methods, "OPTIONS"]);
  if (all.has("GET")) all.add("HEAD");
  return [...all].sort().join(", ");
};

describe("HTTP methods on every route", () => {
  let server: AppServer;
  let port = 0;

  beforeAll(async () => {
    for (const { route, file } of FILES) modules.set(route, (await import(file)) as Module);
    guardMethods(AppServer.prototype);
    server = new AppServer(listener);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it("the table of methods is the route files' own: every file listed, each with the methods it exports", () => {
    const exported = Object.fromEntries(FILES.map(({ route }) => [route, ROUTE_HANDLER_METHODS.filter((m) => typeof modules.get(route)?.[m] === "function")]));
    // /refusals/export exports GET only to answer it with 405 itself (a link must not export).
    exported["/refusals/export"] = (exported["/refusals/export"] ?? []).filter((m) => m !== "GET");
    expect(Object.fromEntries(Object.entries(ROUTE_METHODS).map(([r, m]) => [r, [...m]]))).toEqual(exported);
    expect(FILES.filter((f) => f.route.startsWith("/api/")).length).toBeGreaterThanOrEqual(9);
  });

  const METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "TRACE", "PROPFIND", "CONNECT"] as const;
  const cases = [
    ...Object.entries(ROUTE_METHODS).map(([route, methods]) => ({ route, target: samplePath(route), methods, json: true })),
    ...["/", "/login", "/endpoints/llm.chat", "/no/such/page"].map((target) => ({ route: target, target, methods: PAGE_METHODS, json: false })),
  ];

  it.each(cases.flatMap((c) => METHODS.map((method) => ({ ...c, method }))))("$method $target", async ({ route, target, methods, json, method }) => {
    const answer = await raw(port, method, target);
    const allow = allowOf(methods);
    expect(answer.status, answer.body).not.toBe(500);
    if (method === "OPTIONS") {
      expect([answer.status, answer.headers.allow]).toEqual([204, allow]);
    } else if (methods.includes(method as (typeof methods)[number]) || (method === "HEAD" && methods.includes("GET"))) {
      // Through proxy.ts and Next's dispatch to the route's own handler (HEAD runs GET's).
      const reached = json ? `${route} ${method === "HEAD" ? "GET" : method}` : "page";
      expect([answer.status, answer.headers["x-reached"]]).toEqual([200, reached]);
    } else {
      expect([answer.status, answer.headers.allow]).toEqual([405, allow]);
      if (method !== "HEAD") {
        if (json) {
          expect(answer.headers["content-type"]).toContain("application/json");
          expect(JSON.parse(answer.body)).toEqual({
            error: { code: "method_not_allowed", message: `${method} is not allowed here; this route answers ${allow}` },
          });
        } else {
          expect(answer.body).toBe(`Method not allowed: ${method} is not allowed here; this page answers ${allow}\n`);
        }
      }
      // The security headers are on the early answers too.
      expect(answer.headers["x-content-type-options"]).toBe("nosniff");
    }
  });

  it("a path under /api that no route answers is a 404 for every method, TRACE included", async () => {
    for (const method of ["GET", "PUT", "TRACE", "OPTIONS"]) {
      const answer = await raw(port, method, "/api/v1/nothing/here");
      expect([method, answer.status]).toEqual([method, 404]);
    }
    expect(JSON.parse((await raw(port, "TRACE", "/api/v1/nothing")).body)).toEqual({ error: { code: "not_found", message: "no such route" } });
  });

  it("CONNECT to a host and port answers 405 with the site root's methods; TRACK and made-up methods are Node's own 400", async () => {
    expect(await raw(port, "CONNECT", "example.com:443")).toMatchObject({ status: 405, headers: { allow: allowOf(PAGE_METHODS) } });
    expect((await raw(port, "TRACK", "/api/health")).status).toBe(400);
    expect((await raw(port, "BREW", "/api/health")).status).toBe(400);
  });
});
