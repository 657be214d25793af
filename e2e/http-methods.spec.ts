import { existsSync } from "node:fs";
import path from "node:path";
import { expect, test } from "@playwright/test";
import { createTestDatabase, hasTestDatabase, type TestDatabase } from "@/db/testing";
import { PAGE_METHODS, ROUTE_METHODS } from "@/lib/http/methods";
import { rawRequest } from "@/lib/http/raw-http";
import { type AppServer, DIST_DIR, freePort, startServer, stopServer, waitHealthy } from "./pages/app-server";
import { DEMO_ADMIN, signedIn } from "./pages/login-page";

// Every route file × every method on the production build: a method a path does not answer is a
// 405 with an Allow header listing exactly its methods (a JSON error for routes), OPTIONS a 204
// with the same Allow, TRACE and CONNECT included, and nothing is ever a 500. TRACE answered 500
// and logged a stack trace on every path: Next cannot build a fetch Request of it, so
// instrumentation.ts installs lib/http/method-guard.ts on the server; proxy.ts answers the rest.
// app/http-methods.test.ts runs the same table through proxy.ts and Next's own method dispatch.

const METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "TRACE", "PROPFIND"] as const;

const allowOf = (methods: readonly string[]) => {
  const all = new Set([...methods, "OPTIONS"]);
  if (all.has("GET")) all.add("HEAD");
  return [...all].sort().join(", ");
};

const samplePath = (route: string) => route.replace(/\[\.\.\.[^\]]+\]/g, "session").replace(/\[[^\]]+\]/g, "00000000-0000-4000-8000-000000000000");

// What each route's own handler answers a request without an API key or a body (HEAD as GET);
// next-auth's POST (a session update without its CSRF token) only has to be neither 405 nor 5xx.
const REACHED: Record<string, number[]> = {
  "GET /api/auth/[...nextauth]": [200],
  "POST /api/demo/subscribe": [400, 404],
  "GET /api/health": [200],
  "GET /api/metrics": [401],
  "GET /api/v1/accounts/[account]": [401],
  "PUT /api/v1/accounts/[account]": [401],
  "POST /api/v1/accounts:bulk": [401],
  "GET /api/v1/endpoints/[key]": [401],
  "GET /api/v1/openapi.json": [200],
  "POST /api/v1/reservations": [401],
  "POST /api/v1/reservations/[id]/release": [401],
  "POST /api/v1/reservations/[id]/settle": [401],
  "POST /refusals/export": [400, 403],
};

test("every route and page answers every method with its own status, 204 or a 405 with an exact Allow, never 500", async ({ page, baseURL }) => {
  test.setTimeout(120_000);
  const port = Number(new URL(baseURL ?? "").port);
  await signedIn(page, DEMO_ADMIN);
  const cookie = (await page.context().cookies()).map((c) => `${c.name}=${c.value}`).join("; ");

  const targets = [
    ...Object.entries(ROUTE_METHODS).map(([route, methods]) => ({ route, target: samplePath(route), methods, json: true })),
    ...["/", "/refusals", "/endpoints/llm.chat"].map((target) => ({ route: target, target, methods: PAGE_METHODS, json: false })),
  ];
  const failures: string[] = [];
  for (const { route, target, methods, json } of targets) {
    const allow = allowOf(methods);
    for (const method of METHODS) {
      const answer = await rawRequest(port, method, target, { cookie });
      const seen = `${method} ${target}: ${answer.status} allow=${answer.headers.allow ?? "-"} ${answer.body.slice(0, 120)}`;
      const allowed = (methods as readonly string[]).includes(method) || (method === "HEAD" && methods.includes("GET"));
      if (answer.status >= 500) failures.push(`${seen} (a 5xx)`);
      else if (method === "OPTIONS") {
        if (answer.status !== 204 || answer.headers.allow !== allow) failures.push(`${seen} (want 204, Allow: ${allow})`);
      } else if (!allowed) {
        if (answer.status !== 405 || answer.headers.allow !== allow) failures.push(`${seen} (want 405, Allow: ${allow})`);
        else if (json && method !== "HEAD" && (JSON.parse(answer.body) as { error?: { code?: string } }).error?.code !== "method_not_allowed")
          failures.push(`${seen} (want a JSON method_not_allowed)`);
      } else if (json) {
        const want = REACHED[`${method === "HEAD" ? "GET" : method} ${route}`];
        if (want ? !want.includes(answer.status) : answer.status === 405)
          failures.push(`${seen} (want ${want ? `one of ${want.join(", ")}` : "the route's own answer"})`);
      } else if (answer.status === 405) failures.push(`${seen} (a page answers ${method})`);
    }
  }
  const connect = await rawRequest(port, "CONNECT", "example.com:443");
  if (connect.status !== 405 || connect.headers.allow !== allowOf(PAGE_METHODS))
    failures.push(`CONNECT example.com:443: ${connect.status} allow=${connect.headers.allow ?? "-"}`);
  const unknown = await rawRequest(port, "TRACE", "/api/v1/no/such/route");
  if (unknown.status !== 404) failures.push(`TRACE /api/v1/no/such/route: ${unknown.status}`);
  expect(failures).toEqual([]);
});

test.describe("TRACE on a server of its own", () => {
  test.skip(!hasTestDatabase(), "a second app process needs a shared Postgres: set TEST_DATABASE_URL");
  let t: TestDatabase | undefined;
  let server: AppServer | undefined;

  test.afterAll(async () => {
    if (server) await stopServer(server);
    await t?.drop();
  });

  test("TRACE on every route logs nothing: no stack trace, no 'HTTP method is unsupported'", async () => {
    test.setTimeout(120_000);
    expect(existsSync(path.join(DIST_DIR, "BUILD_ID")), `the e2e production build in ${DIST_DIR} (made by the webServer) is missing`).toBe(true);
    t = await createTestDatabase("http_methods", { max: 2 });
    server = startServer(await freePort(), t.url);
    await waitHealthy(server);
    const port = Number(new URL(server.url).port);
    const before = server.output().length;
    for (const target of [...Object.keys(ROUTE_METHODS).map(samplePath), "/", "/login"]) {
      const answer = await rawRequest(port, "TRACE", target);
      expect([target, answer.status]).toEqual([target, 405]);
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
    const logged = server.output().slice(before);
    expect(logged).not.toMatch(/unsupported|TypeError|Internal Server Error|^\s+at /m);
  });
});
