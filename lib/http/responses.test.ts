import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

import { ApiKeyError } from "@/lib/api-keys/errors";
import { StaffAdminError } from "@/lib/auth/staff-errors";
import { CatalogConflictError, CatalogError } from "@/lib/limits/errors";
import { CeilingConflictError } from "@/lib/ceilings/errors";
import { ReservationInputError } from "@/lib/enforcement/types";
import { DomainError, InputError } from "@/lib/errors";
import { SpendNotFoundError } from "@/lib/spend/errors";
import { ERROR_CODES } from "./openapi-schemas";
import { domainErrorAnswer, registeredStatus, statusOf } from "./responses";

describe("one error family, mapped once to HTTP", () => {
  const cases: [DomainError, number][] = [
    [new CatalogError("duplicate_key", "an endpoint sms.otp already exists"), 409],
    [new CatalogConflictError(3, "someone else saved first"), 409],
    [new CeilingConflictError(120, 4, "someone else changed this ceiling first"), 409],
    [new StaffAdminError("exists", "a member a@b.co already exists"), 409],
    [new ApiKeyError("not_found", "no API key with id 9"), 404],
    [InputError.of("bad URL"), 400],
    [new SpendNotFoundError("no endpoint with id 9"), 404],
    [InputError.of("password must be at least 12 characters, got 3"), 400],
    [new ReservationInputError("endpoint_archived", "endpoint 'x' is archived"), 410],
    [new ReservationInputError("idempotency_conflict", "the key was used for another call"), 409],
  ];

  it.each(cases)("%s answers its code's status with { error: { code, message } }", (error, status) => {
    expect(error).toBeInstanceOf(DomainError);
    const answer = domainErrorAnswer(error);
    expect(answer.status).toBe(status);
    expect(answer.headers["cache-control"]).toBe("no-store");
    expect(JSON.parse(answer.body)).toEqual({ error: { code: error.code, message: error.message } });
  });

  it("answers every documented API code with the status the README gives it", () => {
    for (const [status, codes] of Object.entries(ERROR_CODES)) for (const code of codes) expect([code, statusOf(code)]).toEqual([code, Number(status)]);
  });

  it("answers authorization codes with 401 and 403, and any other code as the caller's input to fix", () => {
    expect([statusOf("unauthenticated"), statusOf("forbidden"), statusOf("reason_required")]).toEqual([401, 403, 400]);
  });
});

/** Every code a DomainError of lib/ can carry, read from the source: its code types and its DomainError<...> generics. */
function codesInSource(): Map<string, string> {
  const found = new Map<string, string>();
  const files = (readdirSync("lib", { recursive: true }) as string[]).filter((f) => f.endsWith(".ts") && !f.endsWith(".test.ts"));
  const literals = (text: string) => [...text.matchAll(/"([a-z_]+)"/g)].map((m) => m[1] as string);
  for (const file of files) {
    const source = readFileSync(path.join("lib", file), "utf8");
    const declared = [
      ...[...source.matchAll(/type \w*ErrorCode =\s*([^;]+);/g)].map((m) => m[1] ?? ""),
      ...[...source.matchAll(/extends DomainError<([^>]+)>/g)].map((m) => m[1] ?? ""),
      ...[...source.matchAll(/ERROR_CODES = \[([^\]]+)\]/g)].map((m) => m[1] ?? ""),
    ];
    for (const text of declared) for (const code of literals(text)) if (!found.has(code)) found.set(code, file);
  }
  return found;
}

describe("the registry of error codes", () => {
  it("names every code a DomainError of lib/ can carry, so none is answered 400 by default", () => {
    const codes = codesInSource();
    // The read finds the families it must: a catalog code, an input code of the SQL contract, a change-control code.
    expect([...codes.keys()]).toEqual(expect.arrayContaining(["duplicate_key", "invalid_amount", "approval_required", "egress_refused"]));
    const unregistered = [...codes].filter(([code]) => registeredStatus(code) === undefined).map(([code, file]) => `${code} (lib/${file})`);
    expect(unregistered).toEqual([]);
  });
});
