import { describe, expect, it } from "vitest";
import { describeIssue, ReserveBody, SettleBody } from "./schemas";

function issue(schema: typeof ReserveBody | typeof SettleBody, value: unknown) {
  const parsed = schema.safeParse(value);
  return parsed.success ? null : describeIssue(parsed.error);
}

describe("HTTP API bodies", () => {
  it("accepts a whole positive JSON number as amount and null as an absent optional field", () => {
    expect(ReserveBody.parse({ endpoint: " e.x ", amount: 3, caller: null, ttlSeconds: null })).toEqual({
      endpoint: "e.x",
      amount: 3,
      caller: undefined,
      destination: undefined,
      idempotencyKey: undefined,
      ttlSeconds: undefined,
    });
    expect(ReserveBody.parse({ endpoint: "e", amount: Number.MAX_SAFE_INTEGER }).amount).toBe(Number.MAX_SAFE_INTEGER);
  });

  it.each([
    ["the string '1e9'", "1e9", 'amount must be a positive whole number (a JSON number up to 9007199254740991), got "1e9"'],
    ["1.5", 1.5, "got 1.5"],
    ["-5", -5, "got -5"],
    ["0", 0, "got 0"],
    ["2^63", 2 ** 63, "got 9223372036854776000"],
    ["MAX_SAFE_INTEGER + 1", Number.MAX_SAFE_INTEGER + 1, "got 9007199254740992"],
    ["true", true, "got true"],
    ["missing", undefined, "amount is required"],
  ])("refuses amount %s with invalid_amount and a message naming the value", (_name, amount, message) => {
    const found = issue(ReserveBody, { endpoint: "e", amount });
    expect(found?.code).toBe("invalid_amount");
    expect(found?.message).toContain(message);
  });

  it("names unknown fields, blank strings and non-objects", () => {
    expect(issue(ReserveBody, { endpoint: "e", amount: 1, idempotency_key: "k" })).toEqual({
      code: "unknown_field",
      message: "unknown field(s): idempotency_key",
    });
    expect(issue(ReserveBody, { endpoint: "e", amount: 1, caller: "  " })).toEqual({ code: "invalid_input", message: "caller must not be blank" });
    expect(issue(ReserveBody, [])).toEqual({ code: "invalid_input", message: "the request body must be a JSON object" });
    expect(issue(ReserveBody, { endpoint: "e", amount: 1, ttlSeconds: 86_401 })?.code).toBe("invalid_ttl");
  });

  it("accepts actual 0 for a settle, but not -1 or a string", () => {
    expect(SettleBody.parse({ actual: 0 })).toEqual({ actual: 0 });
    expect(issue(SettleBody, { actual: -1 })?.code).toBe("invalid_amount");
    expect(issue(SettleBody, { actual: "3" })?.code).toBe("invalid_amount");
  });
});
