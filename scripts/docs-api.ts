// npm run docs:api: renders docs/http-api.md, the HTTP API reference, from the OpenAPI document,
// and docs/errors/<code>.md, a page per error code, from the registry of codes and their guide
// lib/http/openapi.ts builds (the one served at GET /api/v1/openapi.json). Never edit the page by
// hand: scripts/docs-api.test.ts fails when it differs from what this script generates.
//   npm run docs:api            write docs/http-api.md
//   npm run docs:api -- --check exit 1 if docs/http-api.md is not what would be written
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { openApiDocument } from "@/lib/http";
import { API_ERROR_GUIDE } from "@/lib/http/error-guide";
import { API_ERROR_CODES, type ApiErrorCode } from "@/lib/http/openapi-schemas";
import { githubSlug } from "./docs-links";

export const API_REFERENCE_PATH = "docs/http-api.md";
/** A page per error code: docs/errors/<code>.md. */
export const ERROR_PAGES_DIR = "docs/errors";

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);
const asObject = (v: unknown): Json => (isObject(v) ? v : {});
const asArray = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const str = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);

/** Text for a Markdown table cell: one line, pipes escaped. */
function cell(text: string): string {
  return text.replace(/\r?\n/g, " ").replace(/\|/g, "\\|");
}

function code(text: string): string {
  const ticks = text.includes("`") ? "``" : "`";
  return `${ticks}${ticks.length > 1 ? " " : ""}${text}${ticks.length > 1 ? " " : ""}${ticks}`;
}

const SAFE = Number.MAX_SAFE_INTEGER;
const METHODS = ["get", "put", "post", "patch", "delete", "head", "options", "trace"];

function schemaName(ref: string): string {
  return ref.replace(/^#\/components\/schemas\//, "");
}

function schemaLink(ref: string): string {
  const name = schemaName(ref);
  return `[${code(name)}](#${githubSlug(name)})`;
}

/** A schema's type in words: `string, 1 to 64 characters`, `integer ≥ 1`, `Granted`, `one of a, b`. */
function typeOf(schema: Json): string {
  if (typeof schema.$ref === "string") return schemaLink(schema.$ref);
  if ("const" in schema) return `${code(JSON.stringify(schema.const))}`;
  if (Array.isArray(schema.enum)) return `one of ${schema.enum.map((e) => code(JSON.stringify(e))).join(", ")}`;
  for (const key of ["anyOf", "oneOf"] as const) {
    const options = asArray(schema[key]).map(asObject);
    if (options.length > 0) {
      const nullable = options.some((o) => o.type === "null");
      const rest = options.filter((o) => o.type !== "null").map(typeOf);
      return `${rest.join(" or ")}${nullable ? " or `null`" : ""}`;
    }
  }
  const type = schema.type;
  const parts: string[] = [];
  if (type === "array") {
    const items = asObject(schema.items);
    parts.push(isObject(schema.items) && items.type === "object" && !items.$ref ? "array of objects" : `array of ${typeOf(items)}`);
  } else if (Array.isArray(type)) {
    parts.push(type.map(String).join(" or "));
  } else if (typeof type === "string") {
    parts.push(schema.format ? `${type} (${String(schema.format)})` : type);
  } else {
    parts.push("any");
  }
  const min = typeof schema.minimum === "number" && schema.minimum > -SAFE ? schema.minimum : undefined;
  const max = typeof schema.maximum === "number" && schema.maximum < SAFE ? schema.maximum : undefined;
  if (min !== undefined && max !== undefined) parts.push(`${min} to ${max}`);
  else if (min !== undefined) parts.push(`≥ ${min}`);
  else if (max !== undefined) parts.push(`≤ ${max}`);
  const minLength = typeof schema.minLength === "number" ? schema.minLength : undefined;
  const maxLength = typeof schema.maxLength === "number" ? schema.maxLength : undefined;
  if (minLength !== undefined && maxLength !== undefined) parts.push(`${minLength} to ${maxLength} characters`);
  else if (maxLength !== undefined) parts.push(`at most ${maxLength} characters`);
  else if (minLength !== undefined) parts.push(`at least ${minLength} characters`);
  if (typeof schema.maxItems === "number") parts.push(`at most ${schema.maxItems} items`);
  return parts.join(", ");
}

type Row = { name: string; type: string; required: boolean; description: string };

/** A schema's fields as rows, nested objects and arrays of objects flattened (`remaining[].used`). */
function fieldRows(schema: Json, prefix = ""): Row[] {
  const rows: Row[] = [];
  const properties = asObject(schema.properties);
  const required = new Set(asArray(schema.required).map(String));
  for (const [name, raw] of Object.entries(properties)) {
    const field = asObject(raw);
    const full = `${prefix}${name}`;
    const options = [...asArray(field.anyOf), ...asArray(field.oneOf)].map(asObject);
    const description = str(field.description) ?? options.map((o) => str(o.description)).find(Boolean) ?? "";
    const pattern = str(field.pattern) ?? options.map((o) => str(o.pattern)).find(Boolean);
    rows.push({
      name: full,
      type: typeOf(field),
      required: required.has(name),
      description: description || (pattern ? "matches a pattern (see the document)" : ""),
    });
    if (field.type === "object" && isObject(field.properties)) rows.push(...fieldRows(field, `${full}.`));
    const items = asObject(field.items);
    if (field.type === "array" && items.type === "object" && isObject(items.properties)) rows.push(...fieldRows(items, `${full}[].`));
  }
  return rows;
}

function fieldTable(schema: Json): string[] {
  const rows = fieldRows(schema);
  if (rows.length === 0) return [];
  const closed = schema.additionalProperties === false;
  return [
    "| field | type | required | description |",
    "|---|---|---|---|",
    ...rows.map((r) => `| ${code(r.name)} | ${cell(r.type)} | ${r.required ? "yes" : ""} | ${cell(r.description)} |`),
    "",
    closed ? "No other field is allowed." : "Other fields may appear.",
  ];
}

function schemaSection(name: string, schema: Json): string[] {
  const lines = [`### ${name}`, ""];
  if (schema.description) lines.push(String(schema.description), "");
  if (schema.type === "object" || isObject(schema.properties)) {
    const table = fieldTable(schema);
    lines.push(...(table.length > 0 ? table : ["An object with no fields."]));
  } else {
    lines.push(`${typeOf(schema)}.`);
  }
  lines.push("");
  return lines;
}

function bodyOf(content: unknown): string {
  const json = asObject(asObject(content)["application/json"]);
  const schema = asObject(json.schema);
  return Object.keys(schema).length === 0 ? "" : typeOf(schema);
}

function operationSection(method: string, route: string, op: Json): string[] {
  const title = `${method.toUpperCase()} ${route}`;
  const lines = [`### ${title}`, ""];
  if (op.summary) lines.push(`${String(op.summary)}.`, "");
  if (op.description) lines.push(String(op.description), "");
  if (op.operationId) lines.push(`Operation id: ${code(String(op.operationId))}.`, "");
  const parameters = asArray(op.parameters).map(asObject);
  if (parameters.length > 0) {
    lines.push("| parameter | in | required | type | description |", "|---|---|---|---|---|");
    for (const p of parameters) {
      lines.push(
        `| ${code(String(p.name))} | ${String(p.in)} | ${p.required === true ? "yes" : ""} | ${cell(typeOf(asObject(p.schema)))} | ${cell(str(p.description) ?? "")} |`,
      );
    }
    lines.push("");
  }
  const body = asObject(op.requestBody);
  if (Object.keys(body).length > 0) {
    lines.push(`Request body (${code("application/json")}, ${body.required === true ? "required" : "optional"}): ${bodyOf(body.content)}.`, "");
  }
  const responses = Object.entries(asObject(op.responses)).sort(([a], [b]) => a.localeCompare(b));
  lines.push("| status | body | headers | meaning |", "|---|---|---|---|");
  for (const [status, raw] of responses) {
    const response = asObject(raw);
    const headers = Object.entries(asObject(response.headers))
      .map(([name, h]) => {
        const header = asObject(h);
        const about = str(header.description);
        return `${code(name)}${about ? ` (${about})` : ""}`;
      })
      .join("; ");
    lines.push(`| ${status} | ${cell(bodyOf(response.content) || "none")} | ${cell(headers)} | ${cell(str(response.description) ?? "")} |`);
  }
  lines.push("");
  return lines;
}

/** Every error code with its status and meaning: the document's x-error-codes, else its schemas. */
function errorCodes(doc: Json): { code: string; status: string; meaning: string }[] {
  const listed = asArray(doc["x-error-codes"]).map(asObject);
  if (listed.length > 0) return listed.map((c) => ({ code: String(c.code), status: String(c.status), meaning: str(c.meaning) ?? "" }));
  const found = new Map<string, { code: string; status: string; meaning: string }>();
  const schemas = asObject(asObject(doc.components).schemas);
  const resolve = (s: Json): Json => (typeof s.$ref === "string" ? asObject(schemas[schemaName(s.$ref)]) : s);
  for (const methods of Object.values(asObject(doc.paths))) {
    for (const op of Object.values(asObject(methods))) {
      for (const [status, raw] of Object.entries(asObject(asObject(op).responses))) {
        const schema = resolve(asObject(asObject(asObject(asObject(raw).content)["application/json"]).schema));
        const codeSchema = asObject(asObject(asObject(asObject(schema.properties).error).properties).code);
        const codes = [...asArray(codeSchema.enum), ...("const" in codeSchema ? [codeSchema.const] : []), ...asArray(codeSchema.examples)];
        for (const c of codes) if (typeof c === "string" && !found.has(c)) found.set(c, { code: c, status, meaning: "" });
      }
    }
  }
  return [...found.values()].sort((a, b) => a.status.localeCompare(b.status));
}

/** docs/http-api.md for an OpenAPI document. */
export function renderApiReference(doc: Json): string {
  const info = asObject(doc.info);
  const paths = asObject(doc.paths);
  const operations: [string, string, Json][] = [];
  for (const [route, methods] of Object.entries(paths)) {
    for (const method of METHODS) {
      const op = asObject(methods)[method];
      if (isObject(op)) operations.push([method, route, op]);
    }
  }
  const schemes = asObject(asObject(doc.components).securitySchemes);
  const servers = asArray(doc.servers).map(asObject);
  const lines: string[] = [
    `# HTTP API reference`,
    "",
    "<!-- Generated by `npm run docs:api` from the OpenAPI document (lib/http/openapi.ts). Do not edit: scripts/docs-api.test.ts fails when this page differs from what the script generates. -->",
    "",
    `${String(info.title ?? "The API")}, version ${String(info.version ?? "?")} (OpenAPI ${String(doc.openapi ?? "?")}). ` +
      "This page is generated from the OpenAPI document the server itself serves at `GET /api/v1/openapi.json` " +
      "(public, no data in it); feed that document to any OpenAPI 3.1 code generator. A guide with examples in " +
      "curl, TypeScript, SQL and Python is [Call it from a service](calling.md#http-api).",
    "",
  ];
  if (info.description) lines.push(String(info.description), "");
  lines.push("## The document", "");
  lines.push(
    "It is generated by `lib/http/openapi.ts` from the zod schemas that validate the requests (`lib/http/schemas.ts`) " +
      "and from response schemas in `lib/http/openapi-schemas.ts`, with zod 4's own `z.toJSONSchema` (target draft " +
      "2020-12): OpenAPI 3.1 schemas are JSON Schema 2020-12, so no second library or second copy of zod's type model " +
      "is needed, and the paths around the schemas are plain data. `app/api/v1/_lib/openapi.int.test.ts` sends real " +
      "requests through every route for every status, validates each answer with Ajv (2020-12) against the document's " +
      "schema for its status, and fails on a status or error code the document does not list, or lists but no request produced.",
    "",
  );
  if (servers.length > 0) {
    lines.push(`Servers: ${servers.map((s) => `${code(String(s.url))}${s.description ? ` (${String(s.description)})` : ""}`).join("; ")}.`, "");
  }
  for (const [name, raw] of Object.entries(schemes)) {
    const scheme = asObject(raw);
    lines.push(
      `Authentication (${code(name)}): ${scheme.type === "http" ? `HTTP ${String(scheme.scheme)}` : String(scheme.type)}` +
        `${scheme.description ? `, ${String(scheme.description)}` : ""}: ${code("Authorization: Bearer <key>")} on every call.`,
      "",
    );
  }
  lines.push("## Operations", "");
  for (const [method, route, op] of operations) {
    const title = `${method.toUpperCase()} ${route}`;
    lines.push(`- [${code(title)}](#${githubSlug(title)})${op.summary ? `: ${String(op.summary)}` : ""}`);
  }
  lines.push("");
  for (const [method, route, op] of operations) lines.push(...operationSection(method, route, op));
  const codes = errorCodes(doc);
  lines.push("## Error codes", "", 'Every error is `{ "error": { "code", "message" } }` and charges nothing; a refusal (429) also names its gate.', "");
  lines.push("| code | status | meaning |", "|---|---|---|");
  for (const c of codes) {
    const page = c.code in API_ERROR_GUIDE ? `[${code(c.code)}](errors/${c.code}.md)` : code(c.code);
    lines.push(`| ${page} | ${c.status} | ${cell(c.meaning)} |`);
  }
  lines.push("");
  lines.push("## Schemas", "");
  for (const [name, schema] of Object.entries(asObject(asObject(doc.components).schemas))) lines.push(...schemaSection(name, asObject(schema)));
  return `${lines
    .join("\n")
    .replace(/\n{3,}/g, "\n\n")
    .trimEnd()}\n`;
}

export function generatedApiReference(): string {
  return renderApiReference(openApiDocument() as Json);
}

const REASON: Record<number, string> = {
  400: "Bad Request",
  401: "Unauthorized",
  403: "Forbidden",
  404: "Not Found",
  405: "Method Not Allowed",
  409: "Conflict",
  410: "Gone",
  413: "Content Too Large",
  429: "Too Many Requests",
  500: "Internal Server Error",
  503: "Service Unavailable",
};

/** The example answer of a code: its body as the API builds it for that status (Refusal, Unavailable, Internal, Error). */
function exampleBody(name: ApiErrorCode, message: string, status: number): Json {
  const error = { code: name, message };
  if (status === 429) return { gate: name, error };
  if (status === 503) return { gate: "unavailable", reason: "connection", mayHaveApplied: false, error };
  if (status === 500) return { requestId: "01JEXAMPLE0000000000000000", error };
  return { error };
}

/** docs/errors/<code>.md for every error code of the API: what happened, how to fix it, an example answer. */
export function generatedErrorPages(): Map<string, string> {
  const pages = new Map<string, string>();
  for (const name of Object.keys(API_ERROR_CODES) as ApiErrorCode[]) {
    const { status, meaning } = API_ERROR_CODES[name];
    const { fix, example } = API_ERROR_GUIDE[name];
    const lines = [
      `# \`${name}\` (${status})`,
      "",
      "<!-- Generated by `npm run docs:api` from lib/http/openapi-schemas.ts and lib/http/error-guide.ts. Do not edit. -->",
      "",
      "## What happened",
      "",
      `${meaning.charAt(0).toUpperCase()}${meaning.slice(1)}.`,
      "",
      "## How to fix it",
      "",
      fix,
      "",
      "## Example",
      "",
      "```http",
      `HTTP/1.1 ${status} ${REASON[status] ?? ""}`.trimEnd(),
      "Content-Type: application/json",
      "",
      JSON.stringify(exampleBody(name, example, status), null, 2),
      "```",
      "",
      `Every error code: [the HTTP API reference](../http-api.md#error-codes).`,
    ];
    pages.set(`${ERROR_PAGES_DIR}/${name}.md`, `${lines.join("\n")}\n`);
  }
  return pages;
}

if (process.argv[1]?.endsWith("docs-api.ts")) {
  const root = path.resolve(import.meta.dirname, "..");
  const files = new Map([[API_REFERENCE_PATH, generatedApiReference()], ...generatedErrorPages()]);
  if (process.argv.includes("--check")) {
    const stale = [...files].filter(([file, text]) => !existsSync(path.join(root, file)) || readFileSync(path.join(root, file), "utf8") !== text);
    if (stale.length > 0) {
      console.error(`${stale.map(([file]) => file).join(", ")} out of date: run npm run docs:api`);
      process.exit(1);
    }
    console.log(`${files.size} pages up to date`);
  } else {
    rmSync(path.join(root, ERROR_PAGES_DIR), { recursive: true, force: true });
    mkdirSync(path.join(root, ERROR_PAGES_DIR), { recursive: true });
    for (const [file, text] of files) writeFileSync(path.join(root, file), text);
    console.log(`wrote ${API_REFERENCE_PATH} and ${files.size - 1} pages in ${ERROR_PAGES_DIR}`);
  }
}
