import { sql } from "drizzle-orm";
import { type Db, resultRows } from "@/db/client";
import { type ApiKeyScope, createApiKey } from "@/lib/api-keys";
import type { ApiAnswer, ApiRequest } from "@/lib/http";

// Shared by the HTTP API integration tests: requests as a client sends them, keys made through
// the same library the dashboard uses, and a snapshot of everything a call could charge.

export const BASE = "http://ceilings.test";

export type Send = {
  key?: string | null;
  body?: unknown;
  /** Sent as is instead of JSON.stringify(body): malformed JSON, big numbers, oversized bodies. */
  raw?: string;
  method?: string;
  headers?: Record<string, string>;
};

/** A request as the handlers read it, with what a client sent for proxy.ts to see (openapi-check.ts). */
export type SentRequest = ApiRequest & { method: string; url: string; headers: Headers };

export function apiRequest(path: string, send: Send = {}): SentRequest {
  const headers = new Headers({ "content-type": "application/json", ...send.headers });
  if (send.key) headers.set("authorization", `Bearer ${send.key}`);
  const text = send.raw ?? (send.body === undefined ? undefined : JSON.stringify(send.body));
  const url = new URL(`${BASE}${path}`);
  return {
    method: send.method ?? "POST",
    url: url.href,
    headers,
    header: (name) => headers.get(name),
    search: url.search,
    body: text === undefined ? undefined : new TextEncoder().encode(text),
  };
}

export type Answer = { status: number; body: Record<string, unknown>; headers: Headers };

export async function read(answer: ApiAnswer): Promise<Answer> {
  return { status: answer.status, body: answer.body ? (JSON.parse(answer.body) as Record<string, unknown>) : {}, headers: new Headers(answer.headers) };
}

export function errorCode(answer: Answer): string | undefined {
  const error = answer.body.error;
  return error && typeof error === "object" && "code" in error && typeof error.code === "string" ? error.code : undefined;
}

export async function makeKey(
  db: Db,
  opts: { endpoints: string[]; account?: string; trusted?: boolean; name?: string; scopes?: ApiKeyScope[] },
): Promise<{ id: number; secret: string }> {
  const created = await createApiKey(db, {
    name: opts.name ?? "test key",
    binding: opts.trusted ? { kind: "trusted" } : { kind: "account", account: opts.account ?? "acct_test" },
    endpointKeys: opts.endpoints,
    scopes: opts.scopes,
    actor: { type: "system", name: "test" },
  });
  return { id: created.key.id, secret: created.secret };
}

/** The billing service's key: trusted, no endpoint, reads and moves accounts. */
export function makeAccountsKey(db: Db, opts: { name?: string; scopes?: ApiKeyScope[]; account?: string } = {}): Promise<{ id: number; secret: string }> {
  return makeKey(db, {
    endpoints: [],
    trusted: opts.account === undefined,
    account: opts.account,
    name: opts.name ?? "billing",
    scopes: opts.scopes ?? ["accounts:read", "accounts:write"],
  });
}

/** Every counter, reservation and refusal: what "nothing was charged" compares. */
export async function chargeSnapshot(db: Db): Promise<string> {
  const rows = resultRows<{ snapshot: string }>(
    await db.execute(sql`
      select json_build_object(
        'usage', (select coalesce(json_agg(u order by u.ceiling_id, u.scope_key, u.window_start), '[]') from usage u),
        'reservations', (select count(*) from reservations),
        'refusals', (select coalesce(sum(count), 0) from refusals)
      )::text as snapshot`),
  );
  return rows[0]?.snapshot ?? "";
}
