import { beforeAll, describe, expect, it } from "vitest";
import { skipWithoutDatabase } from "@/db/testing";
import { useTestDatabase } from "@/db/testing-suite";
import { makeEndpoint } from "@/lib/enforcement/test-fixtures";
import type { ApiDeps } from "./deps";
import { ajv, conformance, doc, operation, schemaAt, serve, type Answer } from "./openapi-check";
import { handleReserve } from "./reserve-handler";
import { handleResolve } from "./resolve-handler";
import { handleEndpointStatus } from "./status-handler";
import { handleAssignPlan, handleAssignPlans, handleGetAccount } from "./accounts-handler";
import { plans } from "@/db/schema";
import { MAX_BULK_BODY_BYTES } from "@/lib/http/schemas";
import { apiRequest, makeAccountsKey, makeKey } from "./test-support";

// A schema-driven fuzzer: cases generated from the document's own request schemas (each field
// missing, null, blank, of the wrong type, too long, with each control character including NUL,
// \v, \f and U+0085 at either end or inside, with leading and trailing spaces, as huge numbers
// such as 2^63 and 1e309, twice in one object, nested deep; extra fields; bodies that are no
// object; path and query parameters and X-Request-Id alike). Every answer must be a status the
// document lists, with a body valid against its schema, never a 500. And the document must say
// what the server does: a request valid against the document's schema is not refused as invalid
// input, and one the schema refuses is refused (400, or 413 over the size cap).

type Case = { label: string; text: string };
type Json = Record<string, unknown>;

// 400 codes about the world rather than the request's shape: a valid request can still get them.
const SEMANTIC_400 = new Set(["caller_required", "destination_required", "invalid_destination", "invalid_actual", "invalid_parts", "unknown_plan"]);

const CONTROLS = ["\u0000", "\u0001", "\u0008", "\t", "\n", "\u000b", "\u000c", "\r", "\u001b", "\u007f", "\u0085", "\u009b"];
const SPACES = [" ", "\u00a0", "\u2003", "\u3000", "\ufeff", "\u2028"];

function typesOf(schema: Json): string[] {
  if (Array.isArray(schema.anyOf)) return (schema.anyOf as Json[]).flatMap(typesOf);
  if (Array.isArray(schema.type)) return schema.type as string[];
  return typeof schema.type === "string" ? [schema.type] : [];
}
function stringSchema(schema: Json): Json {
  return Array.isArray(schema.anyOf) ? ((schema.anyOf as Json[]).find((s) => s.type === "string") ?? {}) : schema;
}
function integerSchema(schema: Json): Json {
  return Array.isArray(schema.anyOf) ? ((schema.anyOf as Json[]).find((s) => s.type === "integer") ?? {}) : schema;
}

/** JSON text of an object from [key, raw JSON value] pairs, so numbers such as 1e309 go as written. */
const objectText = (entries: [string, string][]) => `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${v}`).join(",")}}`;

/** The values to try for one field of a request schema, as raw JSON text. */
function fieldVariants(schema: Json, valid: string): { label: string; raw: string }[] {
  const types = typesOf(schema);
  const out: { label: string; raw: string }[] = [{ label: "null", raw: "null" }];
  const wrong: [string, string][] = [
    ["true", "true"],
    ["a string", '"1"'],
    ["a number", "7"],
    ["an array", "[1]"],
    ["an object", '{"a":1}'],
  ];
  for (const [label, raw] of wrong)
    if (!(label === "a string" && types.includes("string")) && !(label === "a number" && types.includes("integer"))) out.push({ label, raw });
  if (types.includes("string")) {
    const s = stringSchema(schema);
    const max = typeof s.maxLength === "number" ? s.maxLength : 100;
    const str = (label: string, value: string) => out.push({ label, raw: JSON.stringify(value) });
    str("blank", "");
    for (const space of SPACES) str(`only ${JSON.stringify(space)}`, space.repeat(3));
    str("tabs and newlines only", "\t\n\r");
    str("at its max length", valid.length >= max ? valid.slice(0, max) : valid + "x".repeat(max - valid.length));
    str("one over its max length", valid + "x".repeat(Math.max(0, max + 1 - valid.length)));
    str("10,000 characters", "y".repeat(10_000));
    for (const space of SPACES) {
      str(`trailing ${JSON.stringify(space)}`, `${valid}${space}${space}`);
      str(`leading ${JSON.stringify(space)}`, `${space}${valid}`);
    }
    str("a space inside", `${valid.slice(0, 1)} ${valid.slice(1)}`);
    for (const c of CONTROLS) {
      str(`${JSON.stringify(c)} at the end`, `${valid}${c}`);
      str(`${JSON.stringify(c)} at the start`, `${c}${valid}`);
      str(`${JSON.stringify(c)} inside`, `${valid.slice(0, 1)}${c}${valid.slice(1)}`);
    }
    str("an emoji", `${valid}\u{1f600}`);
    str("a lone surrogate", `${valid}\ud800`);
  }
  if (types.includes("integer")) {
    const n = integerSchema(schema);
    const min = Number(n.minimum ?? 0);
    const max = Number(n.maximum ?? Number.MAX_SAFE_INTEGER);
    for (const [label, raw] of [
      ["its minimum", String(min)],
      ["below its minimum", String(min - 1)],
      ["its maximum", String(max)],
      ["above its maximum", String(max + 1)],
      ["-1", "-1"],
      ["-0", "-0"],
      ["1.5", "1.5"],
      ["1.0", "1.0"],
      ["1e2", "1e2"],
      ["2^53", "9007199254740992"],
      ["2^53 + 1", "9007199254740993"],
      ["2^63", "9223372036854775808"],
      ["1e309", "1e309"],
      ["-1e309", "-1e309"],
      ["a quoted number", '"5"'],
    ] as const)
      out.push({ label, raw });
  }
  return out;
}

/** Every generated body for a request schema, from a valid one. */
function bodyCases(schema: Json, valid: Record<string, unknown>): Case[] {
  // A body that needs one of two fields is documented as two whole objects (anyOf): the same fields.
  const members = Array.isArray(schema.anyOf) ? (schema.anyOf as Json[]) : [schema];
  const properties = Object.assign({}, ...members.map((m) => m.properties ?? {})) as Record<string, Json>;
  const base = Object.entries(valid).map(([k, v]): [string, string] => [k, JSON.stringify(v)]);
  const cases: Case[] = [{ label: "the valid body", text: objectText(base) }];
  for (const [field, fieldSchema] of Object.entries(properties)) {
    const others = base.filter(([k]) => k !== field);
    cases.push({ label: `${field} missing`, text: objectText(others) });
    const validValue = typeof valid[field] === "string" ? (valid[field] as string) : "k1";
    for (const v of fieldVariants(fieldSchema, validValue)) cases.push({ label: `${field} ${v.label}`, text: objectText([...others, [field, v.raw]]) });
    const current = base.find(([k]) => k === field)?.[1] ?? (typesOf(fieldSchema).includes("integer") ? "1" : '"k1"');
    cases.push({ label: `${field} twice`, text: objectText([...base.filter(([k]) => k !== field), [field, current], [field, current]]) });
    cases.push({ label: `${field} nested 40 deep`, text: objectText([...others, [field, "[".repeat(40) + current + "]".repeat(40)]]) });
  }
  cases.push(
    { label: "an extra field", text: objectText([...base, ["bogus", "1"]]) },
    { label: "an extra field with a control character in its name", text: objectText([...base, ["bo\u0000gus", "1"]]) },
    { label: "a __proto__ field", text: objectText([...base, ["__proto__", '{"amount":1}']]) },
    { label: "a misspelt field", text: objectText([...base, ["idempotency_key", '"k"']]) },
    { label: "an empty body", text: "" },
    { label: "an empty object", text: "{}" },
    { label: "an array", text: "[]" },
    { label: "a number", text: "1" },
    { label: "a string", text: '"x"' },
    { label: "null", text: "null" },
    { label: "not JSON", text: "{endpoint:" },
    { label: "a BOM before the JSON", text: `\ufeff${objectText(base)}` },
    { label: "8,000 levels of arrays", text: "[".repeat(8_000) + "]".repeat(8_000) },
    { label: "3,000 levels of objects", text: '{"":'.repeat(3_000) + "1" + "}".repeat(3_000) },
    { label: "100,000 levels of arrays", text: "[".repeat(100_000) + "]".repeat(100_000) },
    { label: "over 16 KiB", text: objectText([...base, ["pad", JSON.stringify("p".repeat(17_000))]]) },
  );
  return cases;
}

/** The depth of nesting and whether a key repeats: what a parsed value can no longer show. */
function shapeOf(text: string): { deep: boolean; duplicate: boolean } {
  let depth = 0;
  let deepest = 0;
  const stack: (Set<string> | null)[] = [];
  let expectKey = false;
  let duplicate = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (ch === "{" || ch === "[") {
      depth += 1;
      deepest = Math.max(deepest, depth);
      stack.push(ch === "{" ? new Set() : null);
      expectKey = ch === "{";
    } else if (ch === "}" || ch === "]") {
      depth -= 1;
      stack.pop();
    } else if (ch === ",") expectKey = stack.at(-1) instanceof Set;
    else if (ch === '"') {
      let j = i + 1;
      while (j < text.length && text[j] !== '"') j += text[j] === "\\" ? 2 : 1;
      const keys = stack.at(-1);
      if (expectKey && keys instanceof Set) {
        const key = text.slice(i, j + 1);
        if (keys.has(key)) duplicate = true;
        keys.add(key);
        expectKey = false;
      }
      i = j;
    }
  }
  return { deep: deepest > 32, duplicate };
}

type Verdict = { valid: boolean | "unknown"; why: string };

/** What the document says of a body: valid, invalid, or beyond what a schema can say. */
function verdictOf(schemaName: string, text: string, required: boolean, cap = 16 * 1024): Verdict {
  if (new TextEncoder().encode(text).length > cap) return { valid: false, why: "over the size cap" };
  if (text.trim() === "") return required ? { valid: "unknown", why: "an empty body reads as {}" } : { valid: true, why: "an empty body" };
  let value: unknown;
  try {
    // The server reads the body as UTF-8, which drops a leading byte order mark (RFC 8259 allows it).
    value = JSON.parse(text.replace(/^\ufeff/, ""));
  } catch {
    return { valid: false, why: "not JSON" };
  }
  const shape = shapeOf(text);
  if (shape.deep || shape.duplicate) return { valid: false, why: shape.deep ? "too deep" : "a repeated key" };
  // No Unicode character, so no portable pattern can name it: the body's reader refuses it
  // (invalid_characters), as it refuses a body too deep, before any schema.
  if (!allWellFormed(value)) return { valid: false, why: "a lone surrogate" };
  const validate = schemaAt("components", "schemas", schemaName);
  return { valid: validate(value) === true, why: JSON.stringify(validate.errors ?? []).slice(0, 300) };
}

/** No lone surrogate (String.prototype.isWellFormed, which this TypeScript target does not know). */
const wellFormed = (text: string) => !/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(text);
const allWellFormed = (value: unknown): boolean =>
  typeof value === "string"
    ? wellFormed(value)
    : typeof value === "object" && value !== null
      ? Object.entries(value).every(([k, v]) => wellFormed(k) && allWellFormed(v))
      : true;

const codeOf = (a: Answer) => (a.body as { error?: { code?: string } } | null)?.error?.code;

/** The document's verdict held against the answer. */
function agreement(label: string, verdict: Verdict, answer: Answer): string | null {
  // The database is up: a 503 is a request that broke a batch, whatever the document says of it.
  if (answer.status === 503) return `${label}: answered 503 with the database up ${JSON.stringify(answer.body)}`;
  if (verdict.valid === "unknown") return null;
  const refused = answer.status === 413 || (answer.status === 400 && !SEMANTIC_400.has(codeOf(answer) ?? ""));
  if (verdict.valid && refused) return `${label}: valid by the document, refused ${answer.status} ${JSON.stringify(answer.body)}`;
  if (!verdict.valid && !refused)
    return `${label}: invalid by the document (${verdict.why}), answered ${answer.status} ${JSON.stringify(answer.body).slice(0, 200)}`;
  return null;
}

describe.skipIf(skipWithoutDatabase())("a schema-driven fuzzer against the OpenAPI document", () => {
  const t = useTestDatabase("openapi_fuzz", { max: 6 });
  const deps: ApiDeps = { db: async () => t.db };
  let endpointKey = "";
  let trusted = "";
  let account = "";
  let billing = "";
  const R = "/api/v1/reservations";

  beforeAll(async () => {
    const e = await makeEndpoint(t.db, {
      perCallMax: 1_000_000_000,
      ceilings: [{ metric: "units", scope: "global", window: "utc_day", value: 1_000_000_000_000 }],
    });
    endpointKey = e.key;
    trusted = (await makeKey(t.db, { endpoints: [e.key], trusted: true })).secret;
    account = (await makeKey(t.db, { endpoints: [e.key], account: "acct_fuzz" })).secret;
    billing = (await makeAccountsKey(t.db)).secret;
    await t.db.insert(plans).values({ key: "pro", name: "Pro" });
  });

  const reserveWith = async (text: string, headers: Record<string, string> = {}) =>
    serve(apiRequest(R, { key: trusted, raw: text, headers }), (r) => handleReserve(r, deps));
  const held = async () => {
    const a = await reserveWith(JSON.stringify({ endpoint: endpointKey, amount: 10 }));
    expect(a.status).toBe(201);
    return String((a.body as { reservationId: string }).reservationId);
  };

  it("POST /api/v1/reservations: every generated body answers a documented status and schema, and agrees with the document", { timeout: 300_000 }, async () => {
    const schema = doc.components.schemas.ReserveBody as Json;
    const cases = bodyCases(schema, { endpoint: endpointKey, amount: 1, caller: "acct_x", destination: "dest-1", idempotencyKey: "k1", ttlSeconds: 60 });
    expect(cases.length).toBeGreaterThan(300);
    const problems: string[] = [];
    let index = 0;
    for (const c of cases) {
      // A fresh idempotency key for every case unless the case is about the key: no case replays another.
      index += 1;
      const text = c.label.startsWith("idempotencyKey") ? c.text : c.text.replace('"idempotencyKey":"k1"', `"idempotencyKey":"k1-${index}"`);
      const answer = await reserveWith(text);
      problems.push(...conformance(R, "post", answer).map((p) => `${c.label}: ${p}`));
      const disagreement = agreement(c.label, verdictOf("ReserveBody", text, true), answer);
      if (disagreement) problems.push(disagreement);
    }
    expect(problems).toEqual([]);
  });

  it("a lone surrogate is a 400 invalid_characters at the edge, not a 503 that blames the database, and the reserves batched beside it pass", async () => {
    const bodies = Array.from({ length: 16 }, (_, i) => JSON.stringify({ endpoint: endpointKey, amount: 1, caller: `acct_batch_${i}` }));
    // JSON.stringify writes a lone surrogate as the escape \ud800: valid JSON text, no character.
    bodies.splice(8, 0, JSON.stringify({ endpoint: endpointKey, amount: 1, caller: "acct_\ud800" }));
    const answers = await Promise.all(bodies.map((b) => reserveWith(b)));
    expect(answers.map((a) => a.status)).toEqual(bodies.map((_, i) => (i === 8 ? 400 : 201)));
    expect(codeOf(answers[8] as Answer)).toBe("invalid_characters");
  });

  it("X-Request-Id: every generated header answers a documented status and agrees with the document", { timeout: 60_000 }, async () => {
    const param = operation(R, "post").parameters?.find((p) => p.name === "X-Request-Id");
    if (!param) throw new Error("X-Request-Id is not documented");
    const validate = ajv.compile(param.schema);
    const values: [string, string][] = [
      ["100 characters", "r".repeat(100)],
      ["101 characters", "r".repeat(101)],
      ["4,000 characters", "r".repeat(4_000)],
      ["a tab inside", "a\tb"],
      ["U+0085 inside (a latin-1 byte)", "a\u0085b"],
      ["U+009B inside", "a\u009bb"],
      ["DEL inside", "a\u007fb"],
      ["latin-1 letters", "caf\u00e9"],
      ["a uuid", "6f1c2d3e-0000-4000-8000-000000000000"],
    ];
    const problems: string[] = [];
    for (const [label, value] of values) {
      const answer = await reserveWith(JSON.stringify({ endpoint: endpointKey, amount: 1 }), { "x-request-id": value });
      problems.push(...conformance(R, "post", answer).map((p) => `${label}: ${p}`));
      const disagreement = agreement(`X-Request-Id ${label}`, { valid: validate(value) === true, why: JSON.stringify(validate.errors) }, answer);
      if (disagreement) problems.push(disagreement);
    }
    expect(problems).toEqual([]);
  });

  it(
    "stateful: follows the links the document declares from a grant (settle, release) in every order, each answer documented",
    { timeout: 120_000 },
    async () => {
      const grant = operation(R, "post");
      const links = (grant.responses["201"] as { links?: Record<string, { operationId: string; parameters: Record<string, string> }> }).links ?? {};
      expect(
        Object.values(links)
          .map((l) => l.operationId)
          .sort(),
      ).toEqual(["releaseReservation", "settleReservation"]);
      // Where each linked operation lives, found by its operationId as a generic client does.
      const byId = new Map<string, { path: string; verb: "settle" | "release" }>();
      for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, { operationId?: string }>>)) {
        for (const op of Object.values(item))
          if (op.operationId === "settleReservation" || op.operationId === "releaseReservation")
            byId.set(op.operationId, { path, verb: op.operationId === "settleReservation" ? "settle" : "release" });
      }
      const pointer = (body: unknown, expression: string) => {
        const match = /^\$response\.body#(\/.*)$/.exec(expression);
        if (!match?.[1]) throw new Error(`an expression this fuzzer does not read: ${expression}`);
        return match[1]
          .split("/")
          .slice(1)
          .reduce<unknown>((at, key) => (at as Record<string, unknown> | undefined)?.[key], body);
      };
      const problems: string[] = [];
      const follow = async (link: string, granted: Answer) => {
        const { operationId, parameters } = links[link] ?? { operationId: "", parameters: {} };
        const target = byId.get(operationId);
        if (!target) throw new Error(`no operation ${operationId}`);
        const id = String(pointer(granted.body, parameters.id ?? ""));
        const answer = await serve(apiRequest(`${R}/${id}/${target.verb}`, { key: trusted, body: target.verb === "settle" ? { actual: 3 } : {} }), (r) =>
          handleResolve(r, id, target.verb, deps),
        );
        problems.push(...conformance(target.path, "post", answer).map((p) => `${link}: ${p}`));
        return answer;
      };
      // Every sequence of two links after a grant, and each link twice: the state machine as the document lets a client walk it.
      for (const [first, second] of [
        ["settle", "settle"],
        ["settle", "release"],
        ["release", "release"],
        ["release", "settle"],
      ] as const) {
        const granted = await reserveWith(JSON.stringify({ endpoint: endpointKey, amount: 10 }));
        problems.push(...conformance(R, "post", granted));
        const one = await follow(first, granted);
        const two = await follow(second, granted);
        expect([one.status, (one.body as { replay?: boolean }).replay], `${first} after a grant`).toEqual([200, false]);
        if (first === second) expect([two.status, (two.body as { replay?: boolean }).replay], `${first} twice`).toEqual([200, true]);
        else expect([two.status, codeOf(two)], `${second} after ${first}`).toEqual([409, "already_resolved"]);
      }
      expect(problems).toEqual([]);
    },
  );

  it("settle and release: every generated body and reservation id answers a documented status and agrees with the document", { timeout: 300_000 }, async () => {
    const problems: string[] = [];
    for (const verb of ["settle", "release"] as const) {
      const path = `${R}/{id}/${verb}`;
      const schemaName = verb === "settle" ? "SettleBody" : "ReleaseBody";
      const schema = doc.components.schemas[schemaName] as Json;
      const cases = bodyCases(schema, verb === "settle" ? { actual: 1 } : {});
      for (const c of cases) {
        const id = await held();
        const answer = await serve(apiRequest(`${R}/${id}/${verb}`, { key: trusted, raw: c.text }), (r) => handleResolve(r, id, verb, deps));
        problems.push(...conformance(path, "post", answer).map((p) => `${verb} ${c.label}: ${p}`));
        const disagreement = agreement(`${verb} ${c.label}`, verdictOf(schemaName, c.text, verb === "settle"), answer);
        if (disagreement) problems.push(disagreement);
      }
      const idSchema = ajv.compile(operation(path, "post").parameters?.find((p) => p.name === "id")?.schema ?? {});
      const ids: [string, string][] = [
        ["not a uuid", "abc"],
        ["upper case", (await held()).toUpperCase()],
        ["with a trailing space", `${await held()} `],
        ["the nil uuid", "00000000-0000-0000-0000-000000000000"],
        ["too long", `${await held()}0`],
        ["a NUL", "\u0000"],
        ["a tab", "\t"],
      ];
      for (const [label, id] of ids) {
        const answer = await serve(apiRequest(`${R}/${encodeURIComponent(id)}/${verb}`, { key: trusted, body: verb === "settle" ? { actual: 1 } : {} }), (r) =>
          handleResolve(r, id, verb, deps),
        );
        problems.push(...conformance(path, "post", answer).map((p) => `${verb} id ${label}: ${p}`));
        const disagreement = agreement(`${verb} id ${label}`, { valid: idSchema(id) === true, why: "id" }, answer);
        if (disagreement) problems.push(disagreement);
      }
    }
    expect(problems).toEqual([]);
  });

  it("GET /api/v1/endpoints/{key}: every generated key and caller answers a documented status and agrees with the document", { timeout: 120_000 }, async () => {
    const path = "/api/v1/endpoints/{key}";
    const params = operation(path, "get").parameters ?? [];
    const keySchema = params.find((p) => p.name === "key")?.schema ?? {};
    const callerSchema = params.find((p) => p.name === "caller")?.schema ?? {};
    const problems: string[] = [];
    const keyValid = ajv.compile(keySchema);
    const callerValid = ajv.compile(callerSchema);
    // The path segment: control characters other than tab, line feed and carriage return are proxy.ts's 400.
    for (const v of fieldVariants(keySchema, endpointKey)) {
      const key = JSON.parse(v.raw) as unknown;
      // A path segment is text (a URL cannot carry a lone surrogate), and an empty one is another path.
      if (typeof key !== "string" || key === "" || !wellFormed(key)) continue;
      const answer = await serve(apiRequest(`/api/v1/endpoints/${encodeURIComponent(key)}`, { key: trusted, method: "GET" }), (r) =>
        handleEndpointStatus(r, key, deps),
      );
      problems.push(...conformance(path, "get", answer).map((p) => `key ${v.label}: ${p}`));
      // A valid key that names no endpoint is a 404, which is not a refusal of its shape.
      const disagreement = agreement(`key ${v.label}`, { valid: keyValid(key) === true, why: "key" }, answer);
      if (disagreement) problems.push(disagreement);
    }
    for (const v of fieldVariants(callerSchema, "acct_fuzz")) {
      const caller = JSON.parse(v.raw) as unknown;
      if (typeof caller !== "string" || !wellFormed(caller)) continue; // a query parameter is text
      for (const key of [trusted, account]) {
        const answer = await serve(apiRequest(`/api/v1/endpoints/${endpointKey}?caller=${encodeURIComponent(caller)}`, { key, method: "GET" }), (r) =>
          handleEndpointStatus(r, endpointKey, deps),
        );
        problems.push(...conformance(path, "get", answer).map((p) => `caller ${v.label}: ${p}`));
        const disagreement = agreement(`caller ${v.label}`, { valid: callerValid(caller) === true, why: "caller" }, answer);
        if (disagreement) problems.push(disagreement);
      }
    }
    expect(problems).toEqual([]);
  });

  it(
    "PUT, GET /api/v1/accounts/{account} and POST /api/v1/accounts:bulk: every generated body, row and account answers a documented status and agrees with the document",
    { timeout: 300_000 },
    async () => {
      const A = "/api/v1/accounts/{account}";
      const B = "/api/v1/accounts:bulk";
      const problems: string[] = [];
      let checked = 0;
      const check = (label: string, path: string, method: string, verdict: Verdict, answer: Answer) => {
        checked += 1;
        problems.push(...conformance(path, method, answer).map((p) => `${label}: ${p}`));
        const disagreement = agreement(label, verdict, answer);
        if (disagreement) problems.push(disagreement);
      };
      // PUT bodies.
      for (const c of bodyCases(doc.components.schemas.AssignPlanBody as Json, { plan: "pro" })) {
        const answer = await serve(apiRequest("/api/v1/accounts/acct_fuzz_put", { key: billing, raw: c.text, method: "PUT" }), (r) =>
          handleAssignPlan(r, "acct_fuzz_put", deps),
        );
        check(`PUT ${c.label}`, A, "put", verdictOf("AssignPlanBody", c.text, true), answer);
      }
      // The account in the path, for PUT and GET.
      const accountSchema = operation(A, "put").parameters?.find((p) => p.name === "account")?.schema ?? {};
      const accountValid = ajv.compile(accountSchema);
      for (const v of fieldVariants(accountSchema, "acct_fuzz")) {
        const id = JSON.parse(v.raw) as unknown;
        if (typeof id !== "string" || id === "" || !wellFormed(id)) continue; // a path segment is text, and an empty one is another path
        const path = `/api/v1/accounts/${encodeURIComponent(id)}`;
        const verdict = { valid: accountValid(id) === true, why: "account" };
        check(
          `PUT account ${v.label}`,
          A,
          "put",
          verdict,
          await serve(apiRequest(path, { key: billing, body: { plan: "pro" }, method: "PUT" }), (r) => handleAssignPlan(r, id, deps)),
        );
        check(
          `GET account ${v.label}`,
          A,
          "get",
          verdict,
          await serve(apiRequest(path, { key: billing, method: "GET" }), (r) => handleGetAccount(r, id, deps)),
        );
      }
      // Bulk bodies, then each field of one row.
      const bulk = (text: string) => serve(apiRequest(B, { key: billing, raw: text }), (r) => handleAssignPlans(r, deps));
      for (const c of bodyCases(doc.components.schemas.BulkAssignBody as Json, { accounts: [{ account: "acct_fuzz_bulk", plan: "pro" }] })) {
        check(`bulk ${c.label}`, B, "post", verdictOf("BulkAssignBody", c.text, true, MAX_BULK_BODY_BYTES), await bulk(c.text));
      }
      const rowSchema = { properties: { account: accountSchema, plan: { type: "string" } } };
      for (const c of bodyCases(rowSchema, { account: "acct_fuzz_row", plan: "pro" })) {
        if (c.text.length > 1 && !c.text.startsWith("{")) continue; // bodies that are no object are the bulk body's cases above
        const text = `{"accounts":[${c.text || "null"}]}`;
        check(`bulk row ${c.label}`, B, "post", verdictOf("BulkAssignBody", text, true, MAX_BULK_BODY_BYTES), await bulk(text));
      }
      expect(checked).toBeGreaterThan(350);
      expect(problems).toEqual([]);
    },
  );
});
