import Ajv2020, { type ValidateFunction } from "ajv/dist/2020";
import { NextRequest } from "next/server";
import { type ApiAnswer, type ApiRequest, openApiDocument, responseOf } from "@/lib/http";
import { proxy } from "@/proxy";
import type { SentRequest } from "./test-support";

// For the OpenAPI tests (openapi.int.test.ts, openapi-fuzz.int.test.ts): the served document
// compiled with Ajv (JSON Schema 2020-12, as OpenAPI 3.1), requests run as the server runs them
// (proxy.ts first, then the route's handler), and each answer held to the document: its status
// must be listed for the operation, its body valid against that status's schema, its documented
// headers present when required and valid. What was seen is recorded, so a test can also fail on
// a documented status or error code that no request produced.

type Json = Record<string, unknown>;
type Header = { required?: boolean; schema: Json };
type ResponseDoc = { headers?: Record<string, Header>; content?: { "application/json"?: { schema: Json } } };
type Operation = {
  operationId: string;
  responses: Record<string, ResponseDoc>;
  parameters?: { name: string; in: string; schema: Json }[];
  requestBody?: { content: { "application/json": { schema: Json } } };
};

export const doc = openApiDocument() as Json & { paths: Record<string, Record<string, Operation>>; components: { schemas: Record<string, Json> } };

export const ajv = new Ajv2020({ strict: false, allErrors: true });
ajv.addFormat("uuid", /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i);
ajv.addFormat("date-time", (s: string) => !Number.isNaN(Date.parse(s)) && /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/.test(s));
ajv.addSchema(doc, "doc");

const escape = (segment: string) => encodeURIComponent(segment.replaceAll("~", "~0").replaceAll("/", "~1"));

/** The compiled schema at a JSON pointer of the document, given as its segments. */
export function schemaAt(...segments: string[]): ValidateFunction {
  const validate = ajv.getSchema(`doc#/${segments.map(escape).join("/")}`);
  if (!validate) throw new Error(`no schema at /${segments.join("/")}`);
  return validate;
}

export type Answer = { status: number; body: unknown; headers: Headers };
export type Seen = { statuses: Set<string>; codes: Set<string> };
export const seen: Seen = { statuses: new Set(), codes: new Set() };

export function operation(path: string, method: string): Operation {
  const op = doc.paths[path]?.[method];
  if (!op) throw new Error(`the document has no ${method} ${path}`);
  return op;
}

/** Every problem of one answer against the document (empty: it conforms), recording what it saw. */
export function conformance(path: string, method: string, answer: Answer): string[] {
  const op = operation(path, method);
  const where = `${op.operationId} ${answer.status}`;
  const response = op.responses[String(answer.status)];
  if (!response) return [`${where}: a status the document does not list (${JSON.stringify(answer.body).slice(0, 200)})`];
  const problems: string[] = [];
  for (const [name, header] of Object.entries(response.headers ?? {})) {
    const value = answer.headers.get(name);
    if (value === null) {
      if (header.required) problems.push(`${where}: the documented header ${name} is missing`);
      continue;
    }
    const parsed = header.schema.type === "integer" && /^-?\d+$/.test(value) ? Number(value) : value;
    const valid = ajv.compile(header.schema);
    if (!valid(parsed)) problems.push(`${where}: header ${name}: ${value} ${JSON.stringify(valid.errors)}`);
  }
  if (response.content?.["application/json"]) {
    if (!answer.headers.get("content-type")?.startsWith("application/json")) problems.push(`${where}: content-type ${answer.headers.get("content-type")}`);
    const validate = schemaAt("paths", path, method, "responses", String(answer.status), "content", "application/json", "schema");
    if (!validate(answer.body)) problems.push(`${where}: ${JSON.stringify(validate.errors)}\n${JSON.stringify(answer.body).slice(0, 400)}`);
  }
  seen.statuses.add(`${op.operationId} ${answer.status}`);
  const code = (answer.body as { error?: { code?: unknown } } | null)?.error?.code;
  if (typeof code === "string") seen.codes.add(`${op.operationId} ${answer.status} ${code}`);
  return problems;
}

async function read(response: Response): Promise<Answer> {
  const text = await response.text();
  let body: unknown = text;
  try {
    body = text === "" ? null : JSON.parse(text);
  } catch {
    // not JSON: the content-type check reports it
  }
  return { status: response.status, body, headers: response.headers };
}

/** Runs a request as the server does: proxy.ts answers or lets it through, then the route's handler. */
export async function serve(request: SentRequest, handler: (request: ApiRequest) => Promise<ApiAnswer>): Promise<Answer> {
  const proxied = proxy(new NextRequest(request.url, { method: request.method, headers: request.headers }));
  if (proxied.headers.get("x-middleware-next") !== "1") return read(proxied);
  return read(responseOf(await handler(request)));
}
