import { describe, expect, it } from "vitest";
import { describeError, logError, redact, setLogSink } from "./redact";

describe("redact", () => {
  it("masks e-mail addresses and phone numbers like the CSV export", () => {
    expect(redact("caller john.doe@gmail.com to +1 415 555 4567")).toBe("caller j***@g***.com to +1******4567");
  });

  it("cuts API key tokens to their public prefix and hides hex hashes", () => {
    const token = `ck_abcd1234_${"A".repeat(43)}`;
    const hash = "a".repeat(64);
    expect(redact(`key ${token} hash ${hash}`)).toBe("key ck_abcd1234_*** hash ***");
  });

  it("leaves ids, counts and timestamps alone", () => {
    expect(redact("reservation 1234 at 2026-03-01T12:00:00.000Z, 20 requests")).toBe("reservation 1234 at 2026-03-01T12:00:00.000Z, 20 requests");
  });
});

describe("logError", () => {
  it("logs a failed batch without the query parameters holding callers and destinations", () => {
    const cause = Object.assign(new Error('duplicate key value violates unique constraint "x"'), {
      name: "PostgresError",
      code: "23505",
      detail: "Key (caller)=(jane@example.com) already exists.",
      parameters: ["jane@example.com", "+14155550100", `ck_abcd1234_${"B".repeat(43)}`],
      query: "insert into reservations ...",
    });
    const error = new Error("Failed query: insert into reservations ... params: acct_7h3k9q89,jane@example.com,+14155550100", { cause });
    const lines: string[] = [];
    const previous = setLogSink((l) => lines.push(l));
    try {
      logError("api: reserve failed for jane@example.com", error);
    } finally {
      setLogSink(previous);
    }
    const out = lines.join("\n");
    expect(out).toContain("[23505]");
    expect(out).not.toContain("jane@example.com");
    expect(out).not.toContain("acct_7h3k9q89");
    expect(out).not.toContain("4155550100");
    expect(out).not.toContain("B".repeat(20));
    expect(describeError("plain")).toBe("plain");
  });
});
