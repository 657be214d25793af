import { describe, expect, it } from "vitest";
import { ReserveParams } from "@/lib/enforcement/types";
import { ReserveBody } from "@/lib/http/schemas";
import { canonicalCaller, hasControlChars, replaceControlChars } from "./caller";

describe("canonical callers", () => {
  it.each(["acct", "acct ", "acct\t", " acct", "\u00a0acct\u2003", "acct\n", "\ufeffacct\u3000", "acct\u0085"])("reads %j as acct at every boundary", (raw) => {
    expect(canonicalCaller(raw)).toBe("acct");
    expect(ReserveParams.parse({ endpoint: "e", amount: 1, caller: raw }).caller).toBe("acct");
    expect(ReserveBody.parse({ endpoint: "e", amount: 1, caller: raw }).caller).toBe("acct");
  });

  it.each(["ac\tct", "a\u0000b", "a\u001bb", "a\u009fb"])("refuses %j (a control character inside) at every boundary", (raw) => {
    expect(hasControlChars(canonicalCaller(raw))).toBe(true);
    expect(ReserveParams.safeParse({ endpoint: "e", amount: 1, caller: raw }).success).toBe(false);
    expect(ReserveBody.safeParse({ endpoint: "e", amount: 1, caller: raw }).success).toBe(false);
  });

  it("refuses control characters in the other text fields too, and makes them storable for the refusal log", () => {
    expect(ReserveParams.safeParse({ endpoint: "e", amount: 1, idempotencyKey: "k\u0000" }).success).toBe(false);
    expect(ReserveBody.safeParse({ endpoint: "e\u0000", amount: 1 }).success).toBe(false);
    expect(ReserveBody.safeParse({ endpoint: "e", amount: 1, destination: "a@b.c\u0007x" }).success).toBe(false);
    expect(replaceControlChars("a\u0000b")).toBe("a\uFFFDb");
    expect(hasControlChars("plain")).toBe(false);
  });
});
