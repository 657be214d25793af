import { readFileSync } from "node:fs";
import path from "node:path";
import Ajv2020 from "ajv/dist/2020";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { openPostgres, type Database } from "@/db/client";
import { skipWithoutDatabase } from "@/db/testing";
import { useTestDatabase } from "@/db/testing-suite";
import { setEndpointArchived } from "@/lib/catalog";
import { openApiDocument } from "@/lib/http";
import { makeEndpoint, setCeilingValue } from "@/lib/enforcement/test-fixtures";
import { GET as openApiRoute } from "../openapi.json/route";
import type { ApiDeps } from "./deps";
import { handleReserve } from "./reserve-handler";
import { handleResolve } from "./resolve-handler";
import { handleEndpointStatus } from "./status-handler";
import { apiRequest, makeKey, read, type Send } from "./test-support";

// The OpenAPI document against real answers of every route: each answer must match the schema of
// its status, and every status the document lists must have been seen, so neither can drift.

// The part of the document the test walks, parsed rather than cast.
const Doc = z.object({ paths: z.record(z.string(), z.record(z.string(), z.object({ responses: z.record(z.string(), z.unknown()) }))) });
const doc = Doc.parse(openApiDocument());
const ajv = new Ajv2020({ strict: false, allErrors: true });
ajv.addFormat("uuid", /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i);
ajv.addFormat("date-time", (s: string) => !Number.isNaN(Date.parse(s)) && /^\d{4}-\d\d-\d\dT/.test(s));
ajv.addSchema(openApiDocument(), "doc");

const seen = new Set<string>();

function check(pathTemplate: string, method: string, status: number, body: unknown): void {
  const response = doc.paths[pathTemplate]?.[method]?.responses[String(status)];
  expect(response, `${method} ${pathTemplate} answered ${status}, which the document does not list`).toBeDefined();
  const pointer = `/paths/${pathTemplate.replaceAll("~", "~0").replaceAll("/", "~1")}/${method}/responses/${status}/content/application~1json/schema`;
  const validate = ajv.getSchema(`doc#${pointer.split("/").map(encodeURIComponent).join("/")}`);
  if (!validate) throw new Error(`no schema at ${pointer}`);
  const ok = validate(body);
  expect(ok, `${method} ${pathTemplate} ${status}: ${JSON.stringify(validate.errors)}\n${JSON.stringify(body)}`).toBe(true);
  seen.add(`${method} ${pathTemplate} ${status}`);
}

describe("the OpenAPI document", () => {
  it("is OpenAPI 3.1, served at /api/v1/openapi.json, and its schemas compile", async () => {
    const served = (await openApiRoute().json()) as Record<string, unknown>;
    expect(served.openapi).toBe("3.1.0");
    expect(served).toEqual(openApiDocument());
    for (const [p, methods] of Object.entries(doc.paths)) {
      for (const [m, op] of Object.entries(methods)) {
        for (const status of Object.keys(op.responses)) {
          expect(typeof ajv.getSchema(`doc#/paths/${encodeURIComponent(p.replaceAll("/", "~1"))}/${m}/responses/${status}/content/application~1json/schema`), `${m} ${p} ${status}`).toBe("function");
        }
      }
    }
  });

  it("lists every error code of the README's HTTP table", () => {
    const readme = readFileSync(path.join(process.cwd(), "README.md"), "utf8");
    const paragraph = /Error codes: ([\s\S]*?)\. A revoked key/.exec(readme)?.[1] ?? "";
    const codes = [...paragraph.matchAll(/`([a-z_]+)`/g)].map((m) => m[1]);
    expect(codes.length).toBeGreaterThan(15);
    const text = JSON.stringify(openApiDocument());
    expect(codes.filter((c) => !text.includes(`"${c}"`))).toEqual([]);
  });
});

describe.skipIf(skipWithoutDatabase())("real answers of every route match the OpenAPI document", () => {
  const t = useTestDatabase("openapi", { max: 6 });
  let dead: Database;
  const deps: ApiDeps = { db: async () => t.db };
  let deadDeps: ApiDeps;

  beforeAll(async () => {
    dead = openPostgres("postgres://postgres@127.0.0.1:9/nowhere", { max: 1, connectTimeoutSeconds: 1 });
    deadDeps = { db: async () => dead.db };
  });
  afterAll(async () => {
    await dead?.close();
  });

  it("POST /api/v1/reservations, settle, release and GET /api/v1/endpoints/{key}", async () => {
    const e = await makeEndpoint(t.db, {
      perCallMax: 20,
      ceilings: [
        { metric: "units", scope: "global", window: "utc_day", value: 24 },
        { metric: "calls", scope: "caller", window: "utc_day", value: 100 },
      ],
    });
    const other = await makeEndpoint(t.db, { ceilings: [{ metric: "units", scope: "global", window: "utc_day", value: 10 }] });
    const a = (await makeKey(t.db, { endpoints: [e.key], account: "acct_a" })).secret;
    const b = (await makeKey(t.db, { endpoints: [e.key], account: "acct_b" })).secret;
    const narrow = (await makeKey(t.db, { endpoints: [other.key], trusted: true })).secret;

    const R = "/api/v1/reservations";
    const reserve = async (send: Send, d = deps) => {
      const answer = await read(await handleReserve(apiRequest(R, send), d));
      check(R, "post", answer.status, answer.body);
      return answer;
    };
    const resolve = async (id: string, verb: "settle" | "release", send: Send, d = deps) => {
      const answer = await read(await handleResolve(apiRequest(`${R}/${id}/${verb}`, send), id, verb, d));
      check(`${R}/{id}/${verb}`, "post", answer.status, answer.body);
      return answer;
    };
    const status = async (key: string, send: Send, query = "", d = deps) => {
      const answer = await read(await handleEndpointStatus(apiRequest(`/api/v1/endpoints/${key}${query}`, { ...send, method: "GET" }), key, d));
      check("/api/v1/endpoints/{key}", "get", answer.status, answer.body);
      return answer;
    };

    const granted = await reserve({ key: a, body: { endpoint: e.key, amount: 5, idempotencyKey: "o1" } });
    expect(granted.status).toBe(201);
    expect((await reserve({ key: a, body: { endpoint: e.key, amount: 5, idempotencyKey: "o1" } })).status).toBe(200);
    expect((await reserve({ key: a, body: { endpoint: e.key, amount: 6, idempotencyKey: "o1" } })).status).toBe(409);
    for (const body of [{ endpoint: e.key, amount: 1.5 }, { endpoint: e.key, amount: 1, ttlSeconds: 0 }, { endpoint: e.key, amount: 1, bogus: 1 }]) {
      expect((await reserve({ key: a, body })).status).toBe(400);
    }
    expect((await reserve({ key: a, raw: "{" })).status).toBe(400);
    expect((await reserve({ body: { endpoint: e.key, amount: 1 } })).status).toBe(401);
    expect((await reserve({ key: a, body: { endpoint: other.key, amount: 1 } })).status).toBe(403);
    expect((await reserve({ key: a, body: { endpoint: e.key, amount: 1, caller: "acct_z" } })).status).toBe(403);
    expect((await reserve({ key: a, body: { endpoint: "no.such", amount: 1 } })).status).toBe(404);
    const admin = { type: "staff", email: "admin@example.com" } as const;
    await setEndpointArchived(t.db, { key: e.key, archived: true, actor: admin, reason: "openapi test" });
    expect((await reserve({ key: a, body: { endpoint: e.key, amount: 1 } })).status).toBe(410);
    await setEndpointArchived(t.db, { key: e.key, archived: false, actor: admin, reason: "openapi test" });
    expect((await reserve({ key: a, body: { endpoint: e.key, amount: 1, destination: "x".repeat(17_000) } })).status).toBe(413);
    expect((await reserve({ key: a, body: { endpoint: e.key, amount: 21 } })).body.gate).toBe("per_call_max");
    expect((await reserve({ key: a, body: { endpoint: e.key, amount: 20 } })).body.gate).toBe("ceiling");
    await setCeilingValue(t.db, e.ceilingIds[0] ?? 0, 0);
    expect((await reserve({ key: a, body: { endpoint: e.key, amount: 1 } })).body.gate).toBe("kill_switch");
    await setCeilingValue(t.db, e.ceilingIds[0] ?? 0, 24);
    expect((await reserve({ key: a, body: { endpoint: e.key, amount: 1 } }, deadDeps)).status).toBe(503);

    const id = String(granted.body.reservationId);
    const second = String((await reserve({ key: a, body: { endpoint: e.key, amount: 2 } })).body.reservationId);
    const unknown = "00000000-0000-4000-8000-000000000000";
    for (const verb of ["settle", "release"] as const) {
      const body = verb === "settle" ? { actual: 3 } : {};
      const target = verb === "settle" ? id : second;
      expect((await resolve(target, verb, { key: b, body })).status).toBe(403);
      expect((await resolve(target, verb, { key: narrow, body })).status).toBe(403);
      expect((await resolve(target, verb, { key: a, body })).status).toBe(200);
      expect((await resolve(target, verb, { key: a, body })).status).toBe(200);
      expect((await resolve(unknown, verb, { key: a, body })).status).toBe(404);
      expect((await resolve("abc", verb, { key: a, body })).status).toBe(400);
      expect((await resolve(target, verb, { body })).status).toBe(401);
      expect((await resolve(target, verb, { key: a, raw: JSON.stringify({ x: "y".repeat(17_000) }) })).status).toBe(413);
      expect((await resolve(target, verb, { key: a, body }, deadDeps)).status).toBe(503);
    }
    expect((await resolve(second, "settle", { key: a, body: { actual: 1 } })).status).toBe(409);
    expect((await resolve(id, "release", { key: a, body: {} })).status).toBe(409);

    expect((await status(e.key, { key: a })).status).toBe(200);
    expect((await status(e.key, { key: a }, "?caller=%20")).status).toBe(400);
    expect((await status(e.key, {})).status).toBe(401);
    expect((await status(other.key, { key: a })).status).toBe(403);
    expect((await status("no.such", { key: a })).status).toBe(404);
    expect((await status(e.key, { key: a }, "", deadDeps)).status).toBe(503);

    const listed = Object.entries(doc.paths).flatMap(([p, methods]) =>
      Object.entries(methods).flatMap(([m, op]) => Object.keys(op.responses).map((s) => `${m} ${p} ${s}`)),
    );
    expect(listed.filter((l) => !seen.has(l))).toEqual([]);
  });
});
