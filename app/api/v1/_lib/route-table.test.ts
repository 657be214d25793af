import { request } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openApiDocument } from "@/lib/http";
import { ROUTE_METHODS } from "@/lib/http/methods";
import { type RunningApiServer, startApiServer } from "./api-server";

// One route table: lib/http/methods.ts' ROUTE_METHODS, which app/http-methods.test.ts holds to the
// route files of app/ and their exports. Here the other two are proved equal to it: the OpenAPI
// document's operations are exactly its /api/v1 routes and methods (the document itself aside),
// and the API server of `npm run api` routes every one of them, and /api/health, to a handler (a
// call reaches it, which answers without a database as it can, never with the router's 404).

const API = Object.entries(ROUTE_METHODS).filter(([route]) => route.startsWith("/api/v1/") && route !== "/api/v1/openapi.json");
/** A path of the route with each [segment] filled in. */
const sample = (route: string) =>
  route.replace(/\[([^\]]+)\]/g, (_, name: string) => (name === "id" ? "0190b4a4-4f8e-7c53-9a2e-1b7e2c1f0a11" : `sample-${name}`));

describe("one route table", () => {
  it("the OpenAPI document's operations are the table's /api/v1 routes and methods", () => {
    const doc = openApiDocument() as unknown as { paths: Record<string, Record<string, unknown>> };
    const documented = Object.entries(doc.paths)
      .flatMap(([route, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${route}`))
      .sort();
    const table = API.flatMap(([route, methods]) => methods.map((m) => `${m} ${route.replace(/\[([^\]]+)\]/g, "{$1}")}`)).sort();
    expect(documented).toEqual(table);
  });

  describe("the API server", () => {
    let api: RunningApiServer;
    beforeAll(async () => {
      // No database: a handler answers that it cannot reach one; the router's answer is what is tested.
      const down = () => Promise.reject(new Error("no database in this test"));
      api = await startApiServer({ deps: { db: down, adminDb: down }, port: 0, host: "127.0.0.1" });
    });
    afterAll(async () => {
      await api?.close();
    });

    const send = (method: string, path: string) =>
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        const { hostname, port } = new URL(api.url);
        const req = request({ host: hostname, port, path, method, headers: { "content-type": "application/json" } }, (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (c: Buffer) => chunks.push(c));
          res.on("end", () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8") }));
        });
        req.on("error", reject);
        req.end(method === "GET" ? undefined : "{}");
      });

    it("routes every route and method of the table to its handler", async () => {
      for (const [route, methods] of API) {
        for (const method of methods) {
          const answer = await send(method, sample(route));
          // Reached its handler: not the router's 404, not the method table's 405.
          const routed = answer.status !== 405 && !answer.body.includes("no such route");
          expect({ call: `${method} ${route}`, routed }).toEqual({ call: `${method} ${route}`, routed: true });
        }
      }
      expect((await send("GET", "/api/health")).body).not.toContain("no such route");
      expect((await send("GET", "/api/v1/openapi.json")).status).toBe(200);
    });
  });
});
