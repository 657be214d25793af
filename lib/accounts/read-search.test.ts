import { describe, expect, it } from "vitest";
import { parseAccountQuery, prefixRange } from "./read-search";

describe("prefixRange", () => {
  it("raises the last code point by one", () => {
    expect(prefixRange("acct_4a")).toEqual({ from: "acct_4a", to: "acct_4b" });
    expect(prefixRange("a%")).toEqual({ from: "a%", to: "a&" });
    expect(prefixRange("caf\u00e9")).toEqual({ from: "caf\u00e9", to: "caf\u00ea" });
  });

  it("steps over the surrogates and drops a trailing U+10FFFF, which has no successor", () => {
    expect(prefixRange("x\ud7ff")).toEqual({ from: "x\ud7ff", to: "x\ue000" });
    expect(prefixRange("ab\u{10ffff}")).toEqual({ from: "ab\u{10ffff}", to: "ac" });
    expect(prefixRange("\u{10ffff}\u{10ffff}")).toEqual({ from: "\u{10ffff}\u{10ffff}", to: null });
  });

  it("bounds exactly the strings that start with the prefix, bytewise", () => {
    const bytes = (s: string) => Buffer.from(s, "utf8");
    const inRange = (s: string, p: string) => {
      const { from, to } = prefixRange(p);
      return Buffer.compare(bytes(s), bytes(from)) >= 0 && (to === null || Buffer.compare(bytes(s), bytes(to)) < 0);
    };
    const words = ["a", "ab", "ab\u{10ffff}", "ab\u{10ffff}z", "ac", "a\u00e9", "b", "ab%", "ab_"];
    for (const p of ["a", "ab", "ab\u{10ffff}", "a\u00e9"]) for (const w of words) expect(inRange(w, p), `${w} / ${p}`).toBe(w.startsWith(p));
  });
});

describe("parseAccountQuery", () => {
  it("trims as enforcement does and refuses what it could never key", () => {
    expect(parseAccountQuery("  acct_1\u00a0")).toBe("acct_1");
    expect(() => parseAccountQuery("")).toThrow("the billing account is required");
    expect(() => parseAccountQuery("a\u0000b")).toThrow("control characters");
    expect(() => parseAccountQuery("x".repeat(201))).toThrow("200 characters or fewer");
  });
});
