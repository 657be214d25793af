import { describe, expect, it } from "vitest";
import { startFakeProvider } from "./fake-provider";
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
    await expect(getJson("https://api.example.com/v1/x", { provider: "P", headers: {}, egress, fetchImpl })).rejects.toThrow(
      /answered 302 \(a redirect to http:\/\/169\.254\.169\.254\/latest, not followed\)/,
    );
  });

  it("refuses a body past its size whatever Content-Length says, and 200 that is not JSON", async () => {
    const big: typeof fetch = async () => new Response(new ReadableStream({ pull: (c) => c.enqueue(new Uint8Array(1024 * 1024)) }), { status: 200 });
    await expect(getJson("https://api.example.com/v1/x", { provider: "P", headers: {}, egress, fetchImpl: big })).rejects.toThrow(/more than 20 MB/);
    const html: typeof fetch = async () => new Response("<html>maintenance sk-secret-value-1234</html>", { status: 200 });
    const error: unknown = await getJson("https://api.example.com/v1/x", {
      provider: "P",
      headers: {},
      egress,
      fetchImpl: html,
      secrets: ["sk-secret-value-1234"],
    }).catch((e: unknown) => e);
    expect(error instanceof Error ? error.message : "").toBe("P: https://api.example.com/v1/x answered 200 but not JSON: <html>maintenance ***</html>");
  });

  it("retries a dropped connection, then names it", async () => {
    let calls = 0;
    const down: typeof fetch = async () => {
      calls += 1;
      throw new TypeError("fetch failed", { cause: new Error("ECONNREFUSED") });
    };
    await expect(getJson("https://api.example.com/v1/x", { provider: "P", headers: {}, egress, fetchImpl: down, sleep: async () => {} })).rejects.toThrow(
      "could not be reached after 4 attempts: fetch failed (ECONNREFUSED)",
    );
    expect(calls).toBe(4);
  });
});

describe("getJson: the address connected to is the address checked", () => {
  it("refuses at connect time a name that answered public when checked and loopback when connected (DNS rebinding)", async () => {
    const fake = await startFakeProvider();
    try {
      const port = new URL(fake.url).port;
      // Public when checked, 127.0.0.1 when connected; "localhost" lands the connection on 127.0.0.1.
      let answer = "93.184.216.34";
      const egress = {
        allowHosts: [] as string[],
        resolve: async () => {
          const a = answer;
          answer = "127.0.0.1";
          return [a];
        },
      };
      const error = await getJson(`http://localhost:${port}/v1/organization/costs`, { provider: "OpenAI", headers: {}, egress, retryCapMs: 5 }).catch(
        (e: unknown) => e,
      );
      expect(fake.requests).toHaveLength(0);
      expect(String(error)).toMatch(/refused to reach localhost:\d+: localhost resolves to 127\.0\.0\.1/);
    } finally {
      await fake.close();
    }
  });

  it("does not fetch a name whose DNS check fails, and says why", async () => {
    const fake = await startFakeProvider();
    try {
      const port = new URL(fake.url).port;
      const egress = {
        allowHosts: [] as string[],
        resolve: async (): Promise<string[]> => {
          throw Object.assign(new Error("queryA ETIMEOUT"), { code: "ETIMEOUT" });
        },
      };
      const error = await getJson(`http://localhost:${port}/v1/organization/costs`, { provider: "OpenAI", headers: {}, egress, retryCapMs: 5 }).catch(
        (e: unknown) => e,
      );
      expect(fake.requests).toHaveLength(0);
      expect(String(error)).toMatch(/could not be resolved \(ETIMEOUT\)/);
    } finally {
      await fake.close();
    }
  });

  it("reaches an allow-listed host over the checked connection", async () => {
    const fake = await startFakeProvider();
    try {
      const body = await getJson(`${fake.url}/nowhere`, { provider: "P", headers: {}, egress: { allowHosts: ["127.0.0.1"] }, retryCapMs: 5 }).catch(
        (e: unknown) => e,
      );
      // The fake answers an unknown path with its 404: the request was made and read back.
      expect(fake.requests.length).toBeGreaterThan(0);
      expect(String(body)).toMatch(/answered 404/);
    } finally {
      await fake.close();
    }
  });

  it("a Retry-After wait longer than the pull's deadline ends at the deadline", async () => {
    const tooMany: typeof fetch = async () => new Response("slow down", { status: 429, headers: { "retry-after": "3600" } });
    const started = Date.now();
    const error = await getJson("https://api.example.com/v1/x", {
      provider: "P",
      headers: {},
      egress: { allowHosts: [], resolve: async () => ["93.184.216.34"] },
      fetchImpl: tooMany,
      retryCapMs: 3_600_000,
      signal: AbortSignal.timeout(200),
    }).catch((e: unknown) => e);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(String(error)).toMatch(/ran out of time/);
  });
});
