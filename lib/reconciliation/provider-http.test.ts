import { describe, expect, it } from "vitest";
import { getJson, retryAfterMs } from "./provider-http";

describe("retryAfterMs", () => {
  it("reads seconds and HTTP dates, and nothing else", () => {
    const now = Date.parse("2026-11-03T12:00:00Z");
    expect(retryAfterMs("30", now)).toBe(30_000);
    expect(retryAfterMs("Tue, 03 Nov 2026 12:00:10 GMT", now)).toBe(10_000);
    expect(retryAfterMs("Tue, 03 Nov 2026 11:00:00 GMT", now)).toBe(0);
    expect(retryAfterMs("soon", now)).toBeNull();
    expect(retryAfterMs(null, now)).toBeNull();
  });
});

describe("getJson", () => {
  const egress = { allowHosts: [], resolve: async () => ["93.184.216.34"] };
  it("does not follow a redirect, and says where it pointed", async () => {
    const fetchImpl: typeof fetch = async () => new Response("", { status: 302, headers: { location: "http://169.254.169.254/latest" } });
    await expect(getJson("https://api.example.com/v1/x", { provider: "P", headers: {}, egress, fetchImpl })).rejects.toThrow(/answered 302 \(a redirect to http:\/\/169\.254\.169\.254\/latest, not followed\)/);
  });

  it("refuses a body past its size whatever Content-Length says, and 200 that is not JSON", async () => {
    const big: typeof fetch = async () => new Response(new ReadableStream({ pull: (c) => c.enqueue(new Uint8Array(1024 * 1024)) }), { status: 200 });
    await expect(getJson("https://api.example.com/v1/x", { provider: "P", headers: {}, egress, fetchImpl: big })).rejects.toThrow(/more than 20 MB/);
    const html: typeof fetch = async () => new Response("<html>maintenance sk-secret-value-1234</html>", { status: 200 });
    const error: unknown = await getJson("https://api.example.com/v1/x", { provider: "P", headers: {}, egress, fetchImpl: html, secrets: ["sk-secret-value-1234"] }).catch((e: unknown) => e);
    expect(error instanceof Error ? error.message : "").toBe("P: https://api.example.com/v1/x answered 200 but not JSON: <html>maintenance ***</html>");
  });

  it("retries a dropped connection, then names it", async () => {
    let calls = 0;
    const down: typeof fetch = async () => {
      calls += 1;
      throw new TypeError("fetch failed", { cause: new Error("ECONNREFUSED") });
    };
    await expect(getJson("https://api.example.com/v1/x", { provider: "P", headers: {}, egress, fetchImpl: down, sleep: async () => {} })).rejects.toThrow("could not be reached after 4 attempts: fetch failed (ECONNREFUSED)");
    expect(calls).toBe(4);
  });
});
