import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { FAKE_KEYS, startFakeProvider, type FakeProvider } from "../fake-provider";
import type { UsageSource } from "../types";
import { pullAnthropic } from "./anthropic";
import type { ProviderContext } from "./common";
import { pullOpenAI } from "./openai";
import { pullTwilio } from "./twilio";

// The three clients against a real local HTTP server serving the providers' documented shapes:
// pagination cursors, daily buckets and their day boundaries, money parsed exactly, a 429 with
// Retry-After, an HTML 500 page and a 401, each checked on what was pulled.

const egress = { allowHosts: ["127.0.0.1"] };
const days = ["2026-10-31", "2026-11-01", "2026-11-02"];

function source(fake: FakeProvider, over: Partial<UsageSource>): UsageSource {
  const now = new Date("2026-11-03T12:00:00Z");
  return {
    id: 1,
    name: "test source",
    kind: "openai",
    location: fake.url,
    credentialRef: "env:CEILINGS_SECRET_TEST",
    account: null,
    timeZone: "UTC",
    currency: "USD",
    lookbackDays: 3,
    thresholdBasisPoints: 200,
    thresholdMicros: 1_000_000,
    unmappedThresholdMicros: 1_000_000,
    pullAt: "06:00:00",
    enabled: true,
    pullRequestedAt: null,
    pullingUntil: null,
    lastPullAt: null,
    lastPullOk: null,
    lastPullError: null,
    createdBy: "test",
    createdAt: now,
    updatedAt: now,
    ...over,
  };
}

const ctx = (secret: string, over: Partial<ProviderContext> = {}): ProviderContext => ({ secret, egress, retryCapMs: 50, ...over });
const sum = (rows: { units: number }[]) => rows.reduce((n, r) => n + r.units, 0);

describe("provider clients on real HTTP", () => {
  let fake: FakeProvider;
  beforeAll(async () => {
    fake = await startFakeProvider({ pageSize: 1 });
  });
  afterAll(async () => {
    await fake.close();
  });
  beforeEach(() => {
    fake.requests.length = 0;
  });

  it("OpenAI: follows next_page across one-bucket pages, maps buckets to UTC days, tokens per usage field (cached apart from input), costs per line item exactly", async () => {
    fake.setOpenAI([
      { day: "2026-10-30", model: "gpt-4o", inputTokens: 999, outputTokens: 1, costValue: 9 },
      { day: "2026-10-31", model: "gpt-4o", inputTokens: 700, inputCachedTokens: 200, outputTokens: 300, costValue: 0.1, lineItem: "gpt-4o, input" },
      { day: "2026-10-31", model: "gpt-4o-mini", inputTokens: 10, outputTokens: 5 },
      { day: "2026-11-02", model: "gpt-4o", inputTokens: 1, outputTokens: 2, costValue: 1.2345675, lineItem: "gpt-4o, output" },
      { day: "2026-11-03", model: "gpt-4o", inputTokens: 5, outputTokens: 5, costValue: 7 },
    ]);
    const rows = await pullOpenAI(source(fake, { kind: "openai" }), days, ctx(FAKE_KEYS.openai));
    const usage = rows.filter((r) => r.costMicros === null);
    // input_tokens counts the cached ones: 700 of which 200 cached is 500 input and 200 cached-input.
    expect(usage.map((r) => [r.day, r.item, r.field, r.units])).toEqual([
      ["2026-10-31", "gpt-4o", "input", 500],
      ["2026-10-31", "gpt-4o", "cached-input", 200],
      ["2026-10-31", "gpt-4o", "output", 300],
      ["2026-10-31", "gpt-4o-mini", "input", 10],
      ["2026-10-31", "gpt-4o-mini", "output", 5],
      ["2026-11-02", "gpt-4o", "input", 1],
      ["2026-11-02", "gpt-4o", "output", 2],
    ]);
    const costs = rows.filter((r) => r.costMicros !== null);
    // 0.1 → 100,000 micros exactly (not 100,000.00000000001); 1.2345675 rounds half-up to 1,234,568.
    expect(costs.map((r) => [r.day, r.item, r.costMicros])).toEqual([
      ["2026-10-31", "gpt-4o, input", 100_000],
      ["2026-11-02", "gpt-4o, output", 1_234_568],
    ]);
    const usageRequests = fake.requests.filter((r) => r.path.endsWith("/usage/completions"));
    // Three days at one bucket a page: three pages, the 2nd and 3rd asked with the cursor.
    expect(usageRequests).toHaveLength(3);
    expect(usageRequests[0]?.query).toMatchObject({
      bucket_width: ["1d"],
      group_by: ["model"],
      start_time: [String(Date.parse("2026-10-31T00:00:00Z") / 1000)],
      end_time: [String(Date.parse("2026-11-03T00:00:00Z") / 1000)],
    });
    expect(usageRequests[1]?.query.page?.[0]).toMatch(/^page_/);
    expect(usageRequests[0]?.headers.authorization).toBe(`Bearer ${FAKE_KEYS.openai}`);
    expect(sum(rows)).toBe(1018);
  });

  it("OpenAI: the project filter is sent as project_ids", async () => {
    fake.setOpenAI([
      { day: "2026-11-01", model: "gpt-4o", inputTokens: 10, outputTokens: 0, projectId: "proj_a" },
      { day: "2026-11-01", model: "gpt-4o", inputTokens: 99, outputTokens: 0, projectId: "proj_b" },
    ]);
    const rows = await pullOpenAI(source(fake, { account: "proj_a" }), days, ctx(FAKE_KEYS.openai));
    expect(sum(rows)).toBe(10);
    expect(fake.requests[0]?.query.project_ids).toEqual(["proj_a"]);
  });

  it("Anthropic: tokens per usage field (input, cache read, both cache writes, output); cost rows named by their model, cents into micros", async () => {
    fake.setAnthropic([
      {
        day: "2026-11-01",
        model: "claude-sonnet-4",
        uncachedInputTokens: 100,
        cacheReadInputTokens: 20,
        cacheCreation5mInputTokens: 3,
        cacheCreation1hInputTokens: 4,
        outputTokens: 50,
        costCents: "123.45",
        description: "Claude Sonnet 4 Usage - Input Tokens",
        tokenType: "uncached_input_tokens",
      },
      {
        day: "2026-11-02",
        model: "claude-haiku",
        uncachedInputTokens: 1,
        outputTokens: 1,
        costCents: "0.00005",
        description: "Claude Haiku Usage - Output Tokens",
        tokenType: "cache_read_input_tokens",
      },
      { day: "2026-11-05", model: "claude-haiku", uncachedInputTokens: 500, outputTokens: 500 },
    ]);
    const rows = await pullAnthropic(source(fake, { kind: "anthropic" }), days, ctx(FAKE_KEYS.anthropic));
    expect(rows.filter((r) => r.costMicros === null).map((r) => [r.day, r.item, r.field, r.units])).toEqual([
      ["2026-11-01", "claude-sonnet-4", "input", 100],
      ["2026-11-01", "claude-sonnet-4", "cache-read", 20],
      ["2026-11-01", "claude-sonnet-4", "cache-write", 3],
      ["2026-11-01", "claude-sonnet-4", "cache-write-1h", 4],
      ["2026-11-01", "claude-sonnet-4", "output", 50],
      ["2026-11-02", "claude-haiku", "input", 1],
      ["2026-11-02", "claude-haiku", "output", 1],
    ]);
    // A cost row is named by the model its description is about ("Claude Sonnet 4 Usage - Input
    // Tokens"), so the rule mapping a model's tokens maps its money. "123.45" cents = $1.2345 =
    // 1,234,500 micros; "0.00005" cents = 0.5 micro, rounded half-up to 1.
    expect(rows.filter((r) => r.costMicros !== null).map((r) => [r.day, r.item, r.field, r.costMicros, r.raw.description])).toEqual([
      ["2026-11-01", "claude-sonnet-4", "input", 1_234_500, "Claude Sonnet 4 Usage - Input Tokens"],
      ["2026-11-02", "claude-haiku", "cache-read", 1, "Claude Haiku Usage - Output Tokens"],
    ]);
    const first = fake.requests.find((r) => r.path.endsWith("/usage_report/messages"));
    expect(first?.headers["x-api-key"]).toBe(FAKE_KEYS.anthropic);
    expect(first?.headers["anthropic-version"]).toBe("2023-06-01");
    expect(first?.query).toMatchObject({
      "group_by[]": ["model"],
      bucket_width: ["1d"],
      starting_at: ["2026-10-31T00:00:00.000Z"],
      ending_at: ["2026-11-03T00:00:00.000Z"],
    });
    expect(fake.requests.filter((r) => r.path.endsWith("/cost_report")).length).toBe(3);
  });

  it("Anthropic: a workspace filters usage by workspace_ids[] and costs by their workspace_id", async () => {
    fake.setAnthropic([
      { day: "2026-11-01", model: "m", uncachedInputTokens: 10, outputTokens: 0, costCents: "100", workspaceId: "wrkspc_a" },
      { day: "2026-11-01", model: "m", uncachedInputTokens: 90, outputTokens: 0, costCents: "900", workspaceId: "wrkspc_b" },
    ]);
    const rows = await pullAnthropic(source(fake, { kind: "anthropic", account: "wrkspc_a" }), days, ctx(FAKE_KEYS.anthropic));
    expect(sum(rows)).toBe(10);
    expect(rows.filter((r) => r.costMicros !== null).map((r) => r.costMicros)).toEqual([1_000_000]);
  });

  it("Twilio: basic auth, next_page_uri pages, item = category, units = count, price exactly; zero rows left out", async () => {
    fake.setTwilio([
      { day: "2026-11-01", category: "sms-outbound", count: 1000, price: 7.9 },
      { day: "2026-11-01", category: "calls", count: 0, price: 0 },
      { day: "2026-11-02", category: "sms-outbound", count: 12, price: "0.0948" },
      { day: "2026-11-04", category: "sms-outbound", count: 5, price: 1 },
    ]);
    const sid = FAKE_KEYS.twilio.accountSid;
    const rows = await pullTwilio(source(fake, { kind: "twilio", account: sid }), days, ctx(FAKE_KEYS.twilio.authToken));
    expect(rows.map((r) => [r.day, r.item, r.units, r.costMicros])).toEqual([
      ["2026-11-01", "sms-outbound", 1000, 7_900_000],
      ["2026-11-02", "sms-outbound", 12, 94_800],
    ]);
    expect(fake.requests.length).toBe(3);
    expect(fake.requests[0]?.path).toBe(`/2010-04-01/Accounts/${sid}/Usage/Records/Daily.json`);
    expect(fake.requests[0]?.query).toMatchObject({ StartDate: ["2026-10-31"], EndDate: ["2026-11-02"] });
    expect(fake.requests[1]?.query.Page).toEqual(["1"]);
    expect(fake.requests[0]?.headers.authorization).toBe(`Basic ${Buffer.from(`${sid}:${FAKE_KEYS.twilio.authToken}`).toString("base64")}`);
  });

  it("Twilio: units are usage in its unit (segments, minutes), a fraction rounded up; roll-ups marked so only leaves are billed", async () => {
    fake.setTwilio([
      { day: "2026-11-01", category: "sms", count: 30, usage: 45, usageUnit: "segments", price: 0.36 },
      { day: "2026-11-01", category: "sms-outbound", count: 20, usage: 35, usageUnit: "segments", price: 0.28 },
      { day: "2026-11-01", category: "sms-outbound-longcode", count: 20, usage: 35, usageUnit: "segments", price: 0.28 },
      { day: "2026-11-01", category: "sms-inbound", count: 10, usage: 10, usageUnit: "segments", price: 0.08 },
      { day: "2026-11-01", category: "calls-outbound", count: 3, usage: "7.5", usageUnit: "minutes", countUnit: "calls", price: 0.1 },
      { day: "2026-11-01", category: "totalprice", count: 0, usage: "0.46", usageUnit: "usd", price: 0.46 },
    ]);
    const rows = await pullTwilio(source(fake, { kind: "twilio", account: FAKE_KEYS.twilio.accountSid }), days, ctx(FAKE_KEYS.twilio.authToken));
    expect(rows.map((r) => [r.item, r.units, r.unit, r.costMicros, r.rollup ?? false])).toEqual([
      ["calls-outbound", 8, "minutes", 100_000, false],
      ["sms", 45, "segments", 360_000, true],
      ["sms-inbound", 10, "segments", 80_000, false],
      ["sms-outbound", 35, "segments", 280_000, true],
      ["sms-outbound-longcode", 35, "segments", 280_000, false],
      ["totalprice", 1, "usd", 460_000, true],
    ]);
    // The leaves are the bill, as totalprice says; the roll-ups sms and sms-outbound would add 0.64 again.
    expect(rows.filter((r) => !r.rollup).reduce((n, r) => n + (r.costMicros ?? 0), 0)).toBe(460_000);
  });

  it("Twilio: a price in another currency fails the pull, naming both", async () => {
    fake.setTwilio([{ day: "2026-11-01", category: "sms-outbound", count: 3, price: 1, priceUnit: "eur" }]);
    await expect(
      pullTwilio(source(fake, { kind: "twilio", account: FAKE_KEYS.twilio.accountSid }), days, ctx(FAKE_KEYS.twilio.authToken)),
    ).rejects.toMatchObject({
      code: "currency_mismatch",
      message: expect.stringMatching(/EUR.*USD/),
    });
  });

  it("a 401 is one sentence with the provider's reason and a hint, and never the key the provider echoed", async () => {
    const wrong = "sk-admin-WRONG-key-abcdef123456";
    const error: unknown = await pullOpenAI(source(fake, {}), days, ctx(wrong)).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "provider_error" });
    const message = error instanceof Error ? error.message : "";
    expect(message).toMatch(
      /^OpenAI: http:\/\/127\.0\.0\.1:\d+\/v1\/organization\/usage\/completions answered 401 Unauthorized \(check the source's credential/,
    );
    expect(message).toContain("Incorrect API key provided: ***");
    expect(message).not.toContain(wrong);
    await expect(pullAnthropic(source(fake, { kind: "anthropic" }), days, ctx("nope-nope"))).rejects.toThrow(/answered 401.*invalid x-api-key/);
    await expect(pullTwilio(source(fake, { kind: "twilio", account: FAKE_KEYS.twilio.accountSid }), days, ctx("bad-token"))).rejects.toThrow(
      /answered 401.*Authenticate/,
    );
  });

  it("a 429 waits as long as Retry-After says (seconds or an HTTP date), capped, then goes on", async () => {
    fake.setOpenAI([{ day: "2026-11-01", model: "gpt-4o", inputTokens: 1, outputTokens: 1 }]);
    fake.failNext(1, { status: 429, retryAfter: 1 });
    const started = Date.now();
    const rows = await pullOpenAI(source(fake, {}), days, ctx(FAKE_KEYS.openai, { retryCapMs: 5_000 }));
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
    expect(sum(rows)).toBe(2);
    // The 429, then the three one-bucket pages again from the start of the same request.
    expect(fake.requests.filter((r) => r.path.endsWith("/usage/completions")).map((r) => r.query.page?.[0] ?? "first")).toEqual([
      "first",
      "first",
      expect.stringMatching(/^page_/),
      expect.stringMatching(/^page_/),
    ]);

    const waits: number[] = [];
    fake.failNext(1, { status: 429, retryAfter: new Date(Date.now() + 30_000).toUTCString() });
    await pullOpenAI(source(fake, {}), days, ctx(FAKE_KEYS.openai, { retryCapMs: 2_000, sleep: async (ms) => void waits.push(ms) }));
    // The date asked for 30 s; the cap holds it to 2 s.
    expect(waits).toEqual([2_000]);
  });

  it("a 429 that never ends, and an HTML 500 page, end in a sentence with the status and a clean excerpt", async () => {
    fake.failNext(4, { status: 429, retryAfter: 0 });
    await expect(pullOpenAI(source(fake, {}), days, ctx(FAKE_KEYS.openai))).rejects.toThrow(
      /answered 429 Too Many Requests \(after 4 attempts\): Rate limit reached/,
    );
    fake.failNext(4, { status: 500, html: true });
    const error: unknown = await pullAnthropic(source(fake, { kind: "anthropic" }), days, ctx(FAKE_KEYS.anthropic)).catch((e: unknown) => e);
    const message = error instanceof Error ? error.message : "";
    expect(message).toMatch(
      /^Anthropic: .* answered 500 Internal Server Error \(after 4 attempts\): 500 Internal Server Error Internal Server Error The upstream server crashed/,
    );
    expect(message).not.toMatch(/<|script|var trace/);
  });

  it("a 5xx once is retried and the pull succeeds", async () => {
    fake.setTwilio([{ day: "2026-11-01", category: "sms-outbound", count: 3, price: 0.03 }]);
    fake.failNext(1, { status: 503, html: true });
    const rows = await pullTwilio(source(fake, { kind: "twilio", account: FAKE_KEYS.twilio.accountSid }), days, ctx(FAKE_KEYS.twilio.authToken));
    expect(rows).toHaveLength(1);
  });

  it("Twilio: a next page on another host is refused, never fetched", async () => {
    const asked: string[] = [];
    const fetchImpl: typeof fetch = async (input) => {
      asked.push(String(input));
      return Response.json({ usage_records: [], next_page_uri: "https://elsewhere.example/2010-04-01/steal" });
    };
    await expect(
      pullTwilio(source(fake, { kind: "twilio", account: FAKE_KEYS.twilio.accountSid }), days, ctx(FAKE_KEYS.twilio.authToken, { fetchImpl })),
    ).rejects.toThrow(/a next page on another host \(elsewhere\.example\)/);
    expect(asked).toHaveLength(1);
  });

  it("a page in a shape it does not know fails the pull, naming the field", async () => {
    const fetchImpl: typeof fetch = async () => Response.json({ data: [{ start_time: "yesterday", results: [] }], has_more: false });
    await expect(pullOpenAI(source(fake, {}), days, ctx(FAKE_KEYS.openai, { fetchImpl }))).rejects.toMatchObject({
      code: "provider_shape",
      message: expect.stringContaining("data.0.start_time"),
    });
  });

  it("refuses to send the key to a host that is not the provider's own nor allow-listed, before any request", async () => {
    const before = fake.requests.length;
    await expect(pullOpenAI(source(fake, {}), days, ctx(FAKE_KEYS.openai, { egress: { allowHosts: [] } }))).rejects.toThrow(
      /sent only to api\.openai\.com or a host named in USAGE_SOURCE_ALLOW_HOSTS, not to 127\.0\.0\.1/,
    );
    expect(fake.requests.length).toBe(before);
    expect(fake.requests).toHaveLength(0);
  });
});

describe("the credential stays with the provider", () => {
  it("Twilio: a 401 page echoing the Authorization header shows neither the base64 SID:token nor the header", async () => {
    const twilio = {
      id: 1,
      name: "twilio",
      kind: "twilio",
      location: "https://api.twilio.com",
      account: FAKE_KEYS.twilio.accountSid,
      timeZone: "UTC",
      currency: "USD",
    } as unknown as UsageSource;
    const fetchImpl = (async (_url: URL, init?: RequestInit) => {
      const auth = new Headers(init?.headers).get("authorization") ?? "";
      return new Response(`<html><body>401 Unauthorized. You sent: ${auth}</body></html>`, { status: 401 });
    }) as unknown as typeof fetch;
    const basic = Buffer.from(`${FAKE_KEYS.twilio.accountSid}:${FAKE_KEYS.twilio.authToken}`).toString("base64");
    const error = await pullTwilio(twilio, ["2026-11-02"], {
      secret: FAKE_KEYS.twilio.authToken,
      egress: { allowHosts: [], resolve: async () => ["93.184.216.34"] },
      fetchImpl,
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Error);
    // Decodes to AC...:<auth token>: the token in all but name, shown to every viewer as last_pull_error.
    expect((error as Error).message).not.toContain(basic.slice(0, 20));
    expect((error as Error).message).toContain("You sent: ***");
  });

  it("an OpenAI source pointed at another host does not send its key there (nor any key), with no request made", async () => {
    const exfil = {
      id: 9,
      name: "exfil",
      kind: "openai",
      location: "https://collector.example",
      credentialRef: "env:CEILINGS_SECRET_OPENAI",
      account: null,
      timeZone: "UTC",
      currency: "USD",
      lookbackDays: 1,
    } as unknown as UsageSource;
    const seen: string[] = [];
    const fetchImpl = (async (_url: URL, init?: RequestInit) => {
      seen.push(new Headers(init?.headers).get("authorization") ?? "");
      return new Response(JSON.stringify({ data: [], has_more: false }), { status: 200 });
    }) as unknown as typeof fetch;
    const error = await pullOpenAI(exfil, ["2026-11-02"], {
      secret: "smtp-password-of-the-alerts",
      egress: { allowHosts: [], resolve: async () => ["93.184.216.34"] },
      fetchImpl,
    }).catch((e: unknown) => e);
    expect(seen).toEqual([]);
    expect(error).toMatchObject({ code: "host_refused", message: expect.stringContaining("not to collector.example") });
    // Allow-listed (a proxy the operator names), the same source is pulled, over https.
    await pullOpenAI(exfil, ["2026-11-02"], { secret: "k", egress: { allowHosts: ["collector.example"] }, fetchImpl });
    expect(seen.length).toBeGreaterThan(0);
  });
});

describe("provider days in another zone", () => {
  let ny: FakeProvider;
  let utc: FakeProvider;
  beforeAll(async () => {
    ny = await startFakeProvider({ timeZone: "America/New_York", pageSize: 2 });
    utc = await startFakeProvider();
  });
  afterAll(async () => {
    await ny.close();
    await utc.close();
  });

  it("buckets starting at New York midnights map to New York days, the 25-hour 1 November included", async () => {
    ny.setOpenAI([
      { day: "2026-10-31", model: "m", inputTokens: 1, outputTokens: 0 },
      { day: "2026-11-01", model: "m", inputTokens: 25, outputTokens: 0 },
      { day: "2026-11-02", model: "m", inputTokens: 3, outputTokens: 0 },
    ]);
    const rows = await pullOpenAI(source(ny, { timeZone: "America/New_York" }), days, ctx(FAKE_KEYS.openai));
    expect(rows.map((r) => [r.day, r.units])).toEqual([
      ["2026-10-31", 1],
      ["2026-11-01", 25],
      ["2026-11-02", 3],
    ]);
    // Asked from New York midnight of the first day (04:00 UTC in daylight time) to that of the day after the last (05:00 UTC).
    expect(ny.requests[0]?.query.start_time).toEqual([String(Date.parse("2026-10-31T04:00:00Z") / 1000)]);
    expect(ny.requests[0]?.query.end_time).toEqual([String(Date.parse("2026-11-03T05:00:00Z") / 1000)]);
  });

  it("UTC buckets for a source counting New York days are refused, saying to use UTC", async () => {
    utc.setAnthropic([{ day: "2026-11-01", model: "m", uncachedInputTokens: 1, outputTokens: 1 }]);
    await expect(pullAnthropic(source(utc, { kind: "anthropic", timeZone: "America/New_York" }), days, ctx(FAKE_KEYS.anthropic))).rejects.toMatchObject({
      code: "day_mismatch",
      message: expect.stringContaining("set the source's time zone to UTC"),
    });
    await expect(
      pullTwilio(source(utc, { kind: "twilio", account: FAKE_KEYS.twilio.accountSid, timeZone: "America/New_York" }), days, ctx(FAKE_KEYS.twilio.authToken)),
    ).rejects.toMatchObject({ code: "day_mismatch" });
  });
});
