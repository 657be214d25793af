import { describe, expect, it } from "vitest";
import { generateToken, hashToken, readBearer, tokenPrefix } from "./token";

describe("API key tokens", () => {
  it("generates ck_<prefix>_<secret> tokens whose stored hash is the SHA-256 of the token", () => {
    const a = generateToken();
    const b = generateToken();
    expect(a.token).toMatch(/^ck_[a-z0-9]{8}_[A-Za-z0-9_-]{43}$/);
    expect(tokenPrefix(a.token)).toBe(a.prefix);
    expect(a.secretHash).toBe(hashToken(a.token));
    expect(a.secretHash).toMatch(/^[0-9a-f]{64}$/);
    expect(a.secretHash).not.toContain(a.token.slice(12));
    expect(b.token).not.toBe(a.token);
  });

  it("reads a bearer token and tells a missing header from a malformed one", () => {
    const { token } = generateToken();
    expect(readBearer(`Bearer ${token}`)).toEqual({ ok: true, token });
    expect(readBearer(`bearer   ${token} `)).toEqual({ ok: true, token });
    expect(readBearer(null)).toEqual({ ok: false, reason: "missing" });
    expect(readBearer("  ")).toEqual({ ok: false, reason: "missing" });
    expect(readBearer(token)).toEqual({ ok: false, reason: "malformed" });
    expect(readBearer(`Basic ${token}`)).toEqual({ ok: false, reason: "malformed" });
    expect(readBearer(`Bearer ${token}x`)).toEqual({ ok: false, reason: "malformed" });
    expect(readBearer(`Bearer ${token} extra`)).toEqual({ ok: false, reason: "malformed" });
  });
});
