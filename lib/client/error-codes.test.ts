import { describe, expect, it } from "vitest";
import { API_ERROR_CODES } from "@/lib/http/openapi-schemas";
import { env } from "@/lib/env";
import { DEFAULT_DEADLINE_MS } from "./index";
import { BAD_REQUEST_CODES, CONFLICT_CODES, FORBIDDEN_CODES, GONE_CODES, NOT_FOUND_CODES, TOO_LARGE_CODES, UNAUTHORIZED_CODES } from "./errors";

// The client ships without the app, so it spells the API's error codes out: every 4xx code the
// server's catalogue (the OpenAPI document's x-error-codes) lists must be one the client types.
// 429 codes are gates (answers, not errors), 405 and a 404 for an unknown path no call of the
// client can get.
describe("the client's error codes", () => {
  it("include every 4xx code of the API under its status", () => {
    const client: Record<number, readonly string[]> = {
      400: BAD_REQUEST_CODES,
      401: UNAUTHORIZED_CODES,
      403: FORBIDDEN_CODES,
      404: [...NOT_FOUND_CODES, "not_found"],
      405: ["method_not_allowed"],
      409: CONFLICT_CODES,
      410: GONE_CODES,
      413: TOO_LARGE_CODES,
    };
    const missing = Object.entries(API_ERROR_CODES)
      .filter(([, { status }]) => status >= 400 && status < 500 && status !== 429)
      .filter(([code, { status }]) => !(client[status] ?? []).includes(code))
      .map(([code, { status }]) => `${status} ${code}`);
    expect(missing).toEqual([]);
  });

  it("export no code the API's document does not list, each under its own status", () => {
    const exported: [number, readonly string[]][] = [
      [400, BAD_REQUEST_CODES],
      [401, UNAUTHORIZED_CODES],
      [403, FORBIDDEN_CODES],
      [404, NOT_FOUND_CODES],
      [409, CONFLICT_CODES],
      [410, GONE_CODES],
      [413, TOO_LARGE_CODES],
    ];
    const catalogue: Record<string, { status: number }> = API_ERROR_CODES;
    const unknown = exported.flatMap(([status, codes]) => codes.filter((c) => catalogue[c]?.status !== status).map((c) => `${status} ${c}`));
    expect(unknown).toEqual([]);
  });

  it("wait longer than the server's deadline, so its 503 (and a retry after its Retry-After) can arrive", () => {
    expect(DEFAULT_DEADLINE_MS).toBeGreaterThanOrEqual(env().ENFORCEMENT_DEADLINE_MS + 1000 + env().ENFORCEMENT_DEADLINE_MS);
  });
});
