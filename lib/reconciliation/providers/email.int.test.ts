import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { FAKE_KEYS, FAKE_SES_SECRET, startFakeProvider, type FakeProvider } from "../fake-provider";
import type { UsageSource } from "../types";
import type { ProviderContext } from "./common";
import { pullPostmark } from "./postmark";
import { pullSendGrid } from "./sendgrid";
import { pullSes } from "./ses";

// The email providers' clients against a real local HTTP server serving their documented shapes:
// SendGrid's daily stats (paged by offset), Postmark's outbound sends (US Eastern days), SES's
// GetSendStatistics XML behind a SigV4 signature the server recomputes. Counts only: no money.

const egress = { allowHosts: ["127.0.0.1"] };
const now = new Date("2026-11-03T12:00:00Z");
const days = ["2026-10-31", "2026-11-01", "2026-11-02"];

function source(fake: FakeProvider, over: Partial<UsageSource>): UsageSource {
  return {
    id: 1, name: "mail", kind: "sendgrid", location: fake.url, credentialRef: "env:CEILINGS_SECRET_TEST", account: null, timeZone: "UTC", currency: "USD", lookbackDays: 3,
    thresholdBasisPoints: 200, thresholdMicros: 1_000_000, unmappedThresholdMicros: 1_000_000, pullAt: "06:00:00", enabled: true, pullRequestedAt: null, pullingUntil: null,
    lastPullAt: null, lastPullOk: null, lastPullError: null, createdBy: "test", createdAt: now, updatedAt: now, ...over,
  };
}
const ctx = (secret: string, over: Partial<ProviderContext> = {}): ProviderContext => ({ secret, egress, retryCapMs: 50, now, ...over });

describe("email provider clients on real HTTP", () => {
  let fake: FakeProvider;
  beforeAll(async () => {
    fake = await startFakeProvider({ pageSize: 2 });
  });
  afterAll(async () => {
    await fake.close();
  });
  beforeEach(() => {
    fake.requests.length = 0;
  });

  it("SendGrid: emails requested per UTC day, every offset page followed, a subuser by on-behalf-of; a 429 waited out", async () => {
    fake.setSendGrid([
      { day: "2026-10-30", requests: 999 },
      { day: "2026-10-31", requests: 1203, delivered: 1190 },
      { day: "2026-11-02", requests: 7 },
      { day: "2026-11-02", requests: 40, subuser: "marketing" },
    ]);
    fake.failNext(1, { status: 429, retryAfter: 0 });
    const rows = await pullSendGrid(source(fake, {}), days, ctx(FAKE_KEYS.sendgrid, { retryCapMs: 1_000 }));
    // Requests, not deliveries: SendGrid bills an email once it is asked for. A day without mail is 0.
    expect(rows.map((r) => [r.day, r.item, r.units, r.costMicros, r.unit])).toEqual([
      ["2026-10-31", "requests", 1203, null, "emails"],
      ["2026-11-01", "requests", 0, null, "emails"],
      ["2026-11-02", "requests", 7, null, "emails"],
    ]);
    const pages = fake.requests.filter((r) => r.path === "/v3/stats");
    // The 429, then two-entry pages from the start: offsets 0 (again), 2.
    expect(pages.map((r) => r.query.offset?.[0])).toEqual(["0", "0", "2"]);
    expect(pages[0]?.headers.authorization).toBe(`Bearer ${FAKE_KEYS.sendgrid}`);
    const sub = await pullSendGrid(source(fake, { account: "marketing" }), days, ctx(FAKE_KEYS.sendgrid));
    expect(sub.map((r) => r.units)).toEqual([0, 0, 40]);
    await expect(pullSendGrid(source(fake, { timeZone: "Europe/Paris" }), days, ctx(FAKE_KEYS.sendgrid))).rejects.toMatchObject({ code: "day_mismatch" });
    const denied: unknown = await pullSendGrid(source(fake, {}), days, ctx("SG.wrong-key-abcdef")).catch((e: unknown) => e);
    expect(String(denied)).toMatch(/SendGrid: .* answered 401/);
    expect(String(denied)).not.toContain("SG.wrong-key-abcdef");
  });

  it("Postmark: sends per US Eastern day of its stream, only for a New York source", async () => {
    fake.setPostmark([
      { day: "2026-10-31", sent: 120 },
      // 2026-11-01 is the day EDT ends (25 hours): Postmark counts it as one day, and so does the source.
      { day: "2026-11-01", sent: 250 },
      { day: "2026-11-01", sent: 9, stream: "broadcast" },
      { day: "2026-11-03", sent: 1 },
    ]);
    const ny = source(fake, { kind: "postmark", timeZone: "America/New_York" });
    const rows = await pullPostmark(ny, days, ctx(FAKE_KEYS.postmark));
    expect(rows.map((r) => [r.day, r.item, r.units, r.costMicros])).toEqual([
      ["2026-10-31", "outbound", 120, null],
      ["2026-11-01", "outbound", 250, null],
    ]);
    expect(fake.requests[0]?.query).toMatchObject({ fromdate: ["2026-10-31"], todate: ["2026-11-02"] });
    expect(fake.requests[0]?.headers["x-postmark-server-token"]).toBe(FAKE_KEYS.postmark);
    expect((await pullPostmark({ ...ny, account: "broadcast" }, days, ctx(FAKE_KEYS.postmark))).map((r) => [r.item, r.units])).toEqual([["broadcast", 9]]);
    await expect(pullPostmark(source(fake, { kind: "postmark" }), days, ctx(FAKE_KEYS.postmark))).rejects.toMatchObject({ code: "day_mismatch", message: expect.stringMatching(/America\/New_York/) });
    await expect(pullPostmark(ny, days, ctx("wrong-token"))).rejects.toThrow(/Postmark: .* answered 401.*No Account or Server API tokens/);
  });

  it("SES: 15-minute points summed into the source's days (New York across the DST change), signed so SES accepts it", async () => {
    fake.setSes([
      { at: "2026-10-31T03:45:00Z", deliveryAttempts: 5 }, // 23:45 on the 30th in New York: not asked
      { at: "2026-10-31T04:00:00Z", deliveryAttempts: 7 }, // 00:00 EDT on the 31st
      { at: "2026-11-01T03:45:00Z", deliveryAttempts: 11 }, // 23:45 EDT on the 31st
      { at: "2026-11-01T04:00:00Z", deliveryAttempts: 13, bounces: 2 }, // 00:00 EDT on the 1st
      { at: "2026-11-02T04:45:00Z", deliveryAttempts: 17 }, // 23:45 EST on the 1st (a 25-hour day)
      { at: "2026-11-02T05:00:00Z", deliveryAttempts: 19 }, // 00:00 EST on the 2nd
    ]);
    const s = source(fake, { kind: "ses", account: "us-east-1", timeZone: "America/New_York" });
    const rows = await pullSes(s, days, ctx(FAKE_SES_SECRET));
    expect(rows.map((r) => [r.day, r.item, r.units, r.costMicros, r.raw.points])).toEqual([
      ["2026-10-31", "DeliveryAttempts", 18, null, 2],
      ["2026-11-01", "DeliveryAttempts", 30, null, 2],
      ["2026-11-02", "DeliveryAttempts", 19, null, 1],
    ]);
    expect(fake.requests[0]?.query).toEqual({ Action: ["GetSendStatistics"], Version: ["2010-12-01"] });
    expect(fake.requests[0]?.headers.authorization).toMatch(/^AWS4-HMAC-SHA256 Credential=AKIAFAKESES0123456789\/20261103\/us-east-1\/ses\/aws4_request, SignedHeaders=host;x-amz-date, Signature=[0-9a-f]{64}$/);
    // Another secret signs differently: SES refuses it, and the error never carries the secret.
    const wrong = `${FAKE_KEYS.ses.accessKeyId}:not-the-secret-key`;
    const error: unknown = await pullSes(s, days, ctx(wrong)).catch((e: unknown) => e);
    expect(String(error)).toMatch(/Amazon SES: .* answered 403.*SignatureDoesNotMatch/);
    expect(String(error)).not.toContain("not-the-secret-key");
    await expect(pullSes(s, days, ctx("no-colon"))).rejects.toMatchObject({ code: "credential_missing" });
    await expect(pullSes({ ...s, account: "mars-1" }, days, ctx(FAKE_SES_SECRET))).rejects.toThrow(/region/);
    // Two weeks back is all SES keeps: an older day is refused, not read as a day without mail.
    await expect(pullSes(s, ["2026-10-19", "2026-10-20"], ctx(FAKE_SES_SECRET))).rejects.toMatchObject({ code: "day_mismatch", message: expect.stringMatching(/two weeks/) });
  });

  it("the keys go only to each provider's own host or an allow-listed one", async () => {
    const refused = (s: UsageSource) => expect(pullSendGrid(s, days, { secret: FAKE_KEYS.sendgrid, egress: { allowHosts: [] }, now })).rejects.toMatchObject({ code: "host_refused" });
    await refused(source(fake, { location: "https://sendgrid.example.com" }));
    await refused(source(fake, {}));
    await expect(pullSes(source(fake, { kind: "ses", account: "eu-west-1", location: "https://email.us-east-1.amazonaws.com" }), days, { secret: FAKE_SES_SECRET, egress: { allowHosts: [] }, now })).rejects.toMatchObject({ code: "host_refused", message: expect.stringMatching(/email\.eu-west-1\.amazonaws\.com/) });
  });
});
