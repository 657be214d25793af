import { describe, expect, it } from "vitest";
import { contentSecurityPolicy, securityHeaders } from "./headers";

describe("securityHeaders", () => {
  it("refuses framing twice over, sniffing and cross-origin referrers", () => {
    const h = securityHeaders({ nonce: "abc", https: false });
    expect(h["X-Frame-Options"]).toBe("DENY");
    expect(h["Content-Security-Policy"]).toContain("frame-ancestors 'none'");
    expect(h["X-Content-Type-Options"]).toBe("nosniff");
    expect(h["Referrer-Policy"]).toBe("same-origin");
    expect(h["Permissions-Policy"]).toContain("camera=()");
  });

  it("sends HSTS only over https", () => {
    expect(securityHeaders({ https: false })["Strict-Transport-Security"]).toBeUndefined();
    expect(securityHeaders({ https: true })["Strict-Transport-Security"]).toMatch(/^max-age=\d+/);
  });

  it("lets only the nonced scripts run, and eval only in development", () => {
    expect(contentSecurityPolicy({ nonce: "n0", https: false })).toContain("script-src 'self' 'nonce-n0' 'strict-dynamic'");
    expect(contentSecurityPolicy({ nonce: "n0", https: false })).not.toContain("unsafe-eval");
    expect(contentSecurityPolicy({ nonce: "n0", https: false, development: true })).toContain("'unsafe-eval'");
    expect(contentSecurityPolicy({ https: false })).toContain("script-src 'none'");
  });
});
