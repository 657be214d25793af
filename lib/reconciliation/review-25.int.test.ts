// REVIEW EVIDENCE (issue 25 adversarial review): each test below FAILS on aa965fd and names a bug.
import { execFileSync } from "node:child_process";
import { mkdtemp, open } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { usageSources } from "@/db/schema";
import { skipWithoutDatabase } from "@/db/testing";
import { useTestDatabase } from "@/db/testing-suite";
import { FAKE_KEYS, startFakeProvider, type FakeProvider } from "./fake-provider";
import { pullDueSources, pullSource, type PullOptions } from "./pull";
import { pullTwilio } from "./providers/twilio";
import { getJson } from "./provider-http";
import type { UsageSource } from "./types";

const now = new Date("2026-11-03T12:00:00Z");
const secrets = (name: string) => ({ CEILINGS_SECRET_OPENAI: FAKE_KEYS.openai })[name];
const timeout = <T>(p: Promise<T>, ms: number) => Promise.race([p.then(() => "settled" as const, () => "settled" as const), new Promise<"hung">((r) => setTimeout(() => r("hung"), ms))]);

describe("REVIEW twilio: the credential never shows in an error", () => {
  it("a 401 page echoing the Authorization header does not put the base64 sid:token into the error", async () => {
    const source = { id: 1, name: "twilio", kind: "twilio", location: "https://api.twilio.com", account: FAKE_KEYS.twilio.accountSid, timeZone: "UTC", currency: "USD" } as unknown as UsageSource;
    const fetchImpl = (async (_url: URL, init?: RequestInit) => {
      const auth = new Headers(init?.headers).get("authorization") ?? "";
      return new Response(`<html><body>401 Unauthorized. You sent: ${auth}</body></html>`, { status: 401 });
    }) as unknown as typeof fetch;
    const basic = Buffer.from(`${FAKE_KEYS.twilio.accountSid}:${FAKE_KEYS.twilio.authToken}`).toString("base64");
    const error = await pullTwilio(source, ["2026-11-02"], { secret: FAKE_KEYS.twilio.authToken, egress: { allowHosts: [] }, fetchImpl }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Error);
    // Decodes to AC...:<auth token>: the token in all but name, shown to every viewer as last_pull_error.
    expect((error as Error).message).not.toContain(basic.slice(0, 40));
  });
});

describe.skipIf(skipWithoutDatabase())("REVIEW pulls", () => {
  const t = useTestDatabase("usage_review", { max: 6 });
  let fake: FakeProvider;
  const options = (): PullOptions => ({ now, secrets, egress: { allowHosts: ["127.0.0.1"] }, retryCapMs: 20 });
  beforeAll(async () => {
    fake = await startFakeProvider({ pageSize: 2 });
  });
  afterAll(async () => {
    await fake.close();
  });
  beforeEach(async () => {
    await t.db.delete(usageSources);
  });

  it("a file source whose location is a FIFO (or /dev/zero, /dev/stdin) does not hang the pull and with it the worker loop", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "review-fifo-"));
    const fifo = path.join(dir, "usage.csv");
    execFileSync("mkfifo", [fifo]);
    const [s] = await t.db.insert(usageSources).values({ createdBy: "test", name: "fifo", kind: "file", location: fifo }).returning();
    if (!s) throw new Error("no source");
    const outcome = await timeout(pullSource(t.db, s.id, options()), 3000);
    // Unblock the pending open() so the test process can end.
    const h = await open(fifo, "w");
    await h.close();
    expect(outcome).toBe("settled");
  });

  it("a provider item with a NUL (model name): not a database error that fails the whole source on every pull", async () => {
    const [s] = await t.db.insert(usageSources).values({ createdBy: "test", name: "openai-nul", kind: "openai", location: fake.url, credentialRef: "env:CEILINGS_SECRET_OPENAI" }).returning();
    if (!s) throw new Error("no source");
    fake.setOpenAI([{ day: "2026-11-02", model: "gpt-4o\u0000evil", inputTokens: 10, outputTokens: 5 }]);
    const outcomes = await pullDueSources(t.db, options());
    fake.setOpenAI([]);
    expect(outcomes.map((o) => o.ok)).toEqual([false]);
    const [after] = await t.db.select().from(usageSources).where(eq(usageSources.id, s.id));
    // Today: Postgres refuses the NUL in usage_rows (22021) and the whole source fails every pull with
    // "the pull failed: Error: Failed query: insert into usage_rows ... invalid byte sequence 0x00".
    expect(after?.lastPullError ?? "").toMatch(/OpenAI|control|NUL|U\+0000/);
  });

  it("a pull that failed (provider down) is tried again within the hour, not only after 24 hours", async () => {
    const [s] = await t.db.insert(usageSources).values({ createdBy: "test", name: "openai", kind: "openai", location: fake.url, credentialRef: "env:CEILINGS_SECRET_OPENAI" }).returning();
    if (!s) throw new Error("no source");
    fake.failNext(10, { status: 500, html: true });
    const first = await pullDueSources(t.db, options());
    expect(first.map((o) => o.ok)).toEqual([false]);
    const [after] = await t.db.select().from(usageSources).where(eq(usageSources.id, s.id));
    expect(after?.lastPullError).toBeTruthy();
    const anHourLater = await pullDueSources(t.db, { ...options(), now: new Date(now.getTime() + 60 * 60_000) });
    expect(anHourLater.map((o) => o.sourceId)).toEqual([s.id]);
  });
});

describe("REVIEW provider-http: SSRF by DNS rebinding", () => {
  it("checks the address it connects to (as webhooks do), not only a name's answer before the fetch", async () => {
    const fake = await startFakeProvider();
    try {
      const port = new URL(fake.url).port;
      // A rebinding name: public when checked, loopback when connected. The resolver answers public
      // once, then 127.0.0.1 (lib/alerts/egress.int.test.ts plays the same resolver for webhooks,
      // which refuse at connect time); "localhost" makes the connection land on 127.0.0.1.
      let answer = "93.184.216.34";
      const egress = { allowHosts: [] as string[], resolve: async () => { const a = answer; answer = "127.0.0.1"; return [a]; } };
      const error = await getJson(`http://localhost:${port}/v1/organization/costs`, { provider: "OpenAI", headers: {}, egress, retryCapMs: 5 }).catch((e: unknown) => e);
      expect(fake.requests).toHaveLength(0);
      expect(String(error)).toMatch(/127\.0\.0\.1|refused/);
    } finally {
      await fake.close();
    }
  });

  it("a name whose DNS check fails is not fetched anyway", async () => {
    const fake = await startFakeProvider();
    try {
      const port = new URL(fake.url).port;
      const egress = { allowHosts: [] as string[], resolve: async (): Promise<string[]> => { throw Object.assign(new Error("queryA ETIMEOUT"), { code: "ETIMEOUT" }); } };
      await getJson(`http://localhost:${port}/v1/organization/costs`, { provider: "OpenAI", headers: {}, egress, retryCapMs: 5 }).catch(() => undefined);
      expect(fake.requests).toHaveLength(0);
    } finally {
      await fake.close();
    }
  });
});

describe("REVIEW secrets: a source cannot send another feature's secret to a host of its choosing", () => {
  it("an OpenAI source pointed at another host with the SMTP password's reference does not send that password", async () => {
    const source = { id: 9, name: "exfil", kind: "openai", location: "https://collector.example", credentialRef: "env:CEILINGS_SECRET_SMTP_PASSWORD", account: null, timeZone: "UTC", currency: "USD", lookbackDays: 1 } as unknown as UsageSource;
    const seen: string[] = [];
    const fetchImpl = (async (_url: URL, init?: RequestInit) => {
      seen.push(new Headers(init?.headers).get("authorization") ?? "");
      return new Response(JSON.stringify({ data: [], has_more: false }), { status: 200 });
    }) as unknown as typeof fetch;
    const { resolveCredential } = await import("./pull");
    const { pullOpenAI } = await import("./providers/openai");
    const secret = resolveCredential(source, (name) => ({ CEILINGS_SECRET_SMTP_PASSWORD: "smtp-password-of-the-alerts" })[name]);
    await pullOpenAI(source, ["2026-11-02"], { secret, egress: { allowHosts: [], resolve: async () => ["93.184.216.34"] }, fetchImpl }).catch(() => undefined);
    expect(seen.join(" ")).not.toContain("smtp-password-of-the-alerts");
  });
});
