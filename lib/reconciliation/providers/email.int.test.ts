import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { FAKE_KEYS, FAKE_SES_SECRET, startFakeProvider, type FakeProvider } from "../fake-provider";
import type { UsageSource } from "../types";
import type { ProviderContext } from "./common";
import { pullPostmark } from "./postmark";
import { pullSendGrid } from "./sendgrid";
import { pullSes, sesDataPoints } from "./ses";
import { signGet } from "./sigv4";

// The email providers' clients against a real local HTTP server serving their documented shapes:
// SendGrid's daily stats (paged by offset), Postmark's outbound sends (US Eastern days, per stream
// or tag), SES's GetSendStatistics XML behind a SigV4 signature the server verifies from the request
// as it arrived. Counts only: no money. Each pulls exactly what was served, waits out a 429 as long
// as Retry-After says, names itself on a 401 without the key, and refuses a zone it does not count.

const egress = { allowHosts: ["127.0.0.1"] };
const now = new Date("2026-11-03T12:00:00Z");
const days = ["2026-10-31", "2026-11-01", "2026-11-02"];

function source(fake: FakeProvider, over: Partial<UsageSource>): UsageSource {
  return {
    id: 1,
    name: "mail",
    kind: "sendgrid",
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
const ctx = (secret: string, over: Partial<ProviderContext> = {}): ProviderContext => ({ secret, egress, retryCapMs: 50, now, ...over });
/** A context whose waits are recorded, not slept: what the client asked to wait, exactly. */
function recording(secret: string, over: Partial<ProviderContext> = {}): { ctx: ProviderContext; waits: number[] } {
  const waits: number[] = [];
  return { waits, ctx: ctx(secret, { retryCapMs: 60_000, sleep: async (ms) => void waits.push(ms), ...over }) };
}
const failure = (e: unknown) => (e instanceof Error ? e.message : String(e));

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

  describe("SendGrid", () => {
    it("emails requested per UTC day, every offset page followed, a subuser by on-behalf-of", async () => {
      fake.setSendGrid([
        { day: "2026-10-30", requests: 999 },
        { day: "2026-10-31", requests: 1203, delivered: 1190 },
        { day: "2026-11-02", requests: 7 },
        { day: "2026-11-02", requests: 40, subuser: "marketing" },
      ]);
      const rows = await pullSendGrid(source(fake, {}), days, ctx(FAKE_KEYS.sendgrid));
      // Requests, not deliveries: SendGrid bills an email once it is asked for. A day without mail is 0.
      expect(rows.map((r) => [r.day, r.item, r.units, r.costMicros, r.unit])).toEqual([
        ["2026-10-31", "requests", 1203, null, "emails"],
        ["2026-11-01", "requests", 0, null, "emails"],
        ["2026-11-02", "requests", 7, null, "emails"],
      ]);
      const pages = fake.requests.filter((r) => r.path === "/v3/stats");
      // Two-entry pages: offsets 0 and 2, the dates and daily aggregation asked each time.
      expect(pages.map((r) => r.query.offset?.[0])).toEqual(["0", "2"]);
      expect(pages[0]?.query).toMatchObject({ start_date: ["2026-10-31"], end_date: ["2026-11-02"], aggregated_by: ["day"] });
      expect(pages[0]?.headers.authorization).toBe(`Bearer ${FAKE_KEYS.sendgrid}`);
      expect(pages[0]?.headers["on-behalf-of"]).toBeUndefined();
      const sub = await pullSendGrid(source(fake, { account: "marketing" }), days, ctx(FAKE_KEYS.sendgrid));
      expect(sub.map((r) => r.units)).toEqual([0, 0, 40]);
      expect(fake.requests.at(-1)?.headers["on-behalf-of"]).toBe("marketing");
    });

    it("a 429 waits as long as Retry-After says, then asks again from the same offset", async () => {
      fake.setSendGrid([{ day: "2026-11-01", requests: 5 }]);
      fake.failNext(1, { status: 429, retryAfter: 7 });
      const { ctx: c, waits } = recording(FAKE_KEYS.sendgrid);
      expect((await pullSendGrid(source(fake, {}), days, c)).map((r) => r.units)).toEqual([0, 5, 0]);
      expect(waits).toEqual([7_000]);
      expect(fake.requests.map((r) => r.query.offset?.[0])).toEqual(["0", "0", "2"]);
    });

    it("a 401 names SendGrid and its reason, never the key; a zone other than UTC is refused before any request", async () => {
      const denied = failure(await pullSendGrid(source(fake, {}), days, ctx("SG.wrong-key-abcdef")).catch((e: unknown) => e));
      expect(denied).toMatch(
        /^SendGrid: http:\/\/127\.0\.0\.1:\d+\/v3\/stats answered 401 Unauthorized \(check the source's credential[^)]*\): authorization required$/,
      );
      expect(denied).not.toContain("SG.wrong-key-abcdef");
      fake.requests.length = 0;
      await expect(pullSendGrid(source(fake, { timeZone: "Europe/Paris" }), days, ctx(FAKE_KEYS.sendgrid))).rejects.toMatchObject({
        code: "day_mismatch",
        message: expect.stringMatching(/UTC/),
      });
      expect(fake.requests).toEqual([]);
    });

    it("a page that repeats a day (an offset not honoured) is refused, not counted twice", async () => {
      const entry = (date: string, requests: number) => ({ date, stats: [{ metrics: { requests, processed: requests, delivered: requests } }] });
      fake.failNext(2, { status: 200, body: JSON.stringify([entry("2026-10-31", 1), entry("2026-11-01", 2)]) });
      await expect(pullSendGrid(source(fake, {}), days, ctx(FAKE_KEYS.sendgrid))).rejects.toMatchObject({
        code: "provider_shape",
        message: expect.stringMatching(/SendGrid .*2026-10-31 after 2026-11-01/),
      });
      fake.failNext(1, { status: 200, body: JSON.stringify([entry("2026-10-31", 1), entry("2026-10-31", 1)]) });
      await expect(pullSendGrid(source(fake, {}), days, ctx(FAKE_KEYS.sendgrid))).rejects.toThrow(/SendGrid .*1\.date: 2026-10-31 after 2026-10-31/);
    });
  });

  describe("Postmark", () => {
    const ny = (fake: FakeProvider, over: Partial<UsageSource> = {}) => source(fake, { kind: "postmark", timeZone: "America/New_York", ...over });
    beforeEach(() => {
      fake.setPostmark([
        { day: "2026-10-30", sent: 77 },
        { day: "2026-10-31", sent: 120 },
        // 2026-11-01 is the day EDT ends (25 hours): Postmark counts it as one day, and so does the source.
        { day: "2026-11-01", sent: 250, tag: "welcome" },
        { day: "2026-11-01", sent: 9, stream: "broadcast" },
        { day: "2026-11-03", sent: 1 },
      ]);
    });

    it("sends per US Eastern day of every stream, item Sent; a stream or a tag when the account names one", async () => {
      const rows = await pullPostmark(ny(fake), days, ctx(FAKE_KEYS.postmark));
      expect(rows.map((r) => [r.day, r.item, r.units, r.costMicros, r.unit])).toEqual([
        ["2026-10-31", "Sent", 120, null, "emails"],
        ["2026-11-01", "Sent", 259, null, "emails"],
      ]);
      // The source's days as Postmark's dates, and no stream: Postmark then counts every stream.
      expect(fake.requests[0]?.query).toEqual({ fromdate: ["2026-10-31"], todate: ["2026-11-02"] });
      expect(fake.requests[0]?.headers["x-postmark-server-token"]).toBe(FAKE_KEYS.postmark);
      expect((await pullPostmark(ny(fake, { account: "broadcast" }), days, ctx(FAKE_KEYS.postmark))).map((r) => [r.day, r.item, r.units])).toEqual([
        ["2026-11-01", "broadcast", 9],
      ]);
      expect(fake.requests.at(-1)?.query.messagestream).toEqual(["broadcast"]);
      expect((await pullPostmark(ny(fake, { account: "outbound" }), days, ctx(FAKE_KEYS.postmark))).map((r) => [r.day, r.units])).toEqual([
        ["2026-10-31", 120],
        ["2026-11-01", 250],
      ]);
      expect((await pullPostmark(ny(fake, { account: "tag:welcome" }), days, ctx(FAKE_KEYS.postmark))).map((r) => [r.day, r.item, r.units])).toEqual([
        ["2026-11-01", "tag:welcome", 250],
      ]);
      expect(fake.requests.at(-1)?.query).toEqual({ fromdate: ["2026-10-31"], todate: ["2026-11-02"], tag: ["welcome"] });
    });

    it("only a New York source: another zone would compare other intervals, refused before any request", async () => {
      for (const timeZone of ["UTC", "America/Chicago", "EST"]) {
        await expect(pullPostmark(ny(fake, { timeZone }), days, ctx(FAKE_KEYS.postmark))).rejects.toMatchObject({
          code: "day_mismatch",
          message: expect.stringMatching(/Postmark's statistics count America\/New_York days.*set its time zone to America\/New_York/),
        });
      }
      expect(fake.requests).toEqual([]);
    });

    it("a 429 waits as long as Retry-After says; a 401 names Postmark and its reason, never the token", async () => {
      fake.failNext(1, { status: 429, retryAfter: 3 });
      const { ctx: c, waits } = recording(FAKE_KEYS.postmark);
      expect((await pullPostmark(ny(fake), days, c)).map((r) => r.units)).toEqual([120, 259]);
      expect(waits).toEqual([3_000]);
      const denied = failure(await pullPostmark(ny(fake), days, ctx("wrong-postmark-token-0123")).catch((e: unknown) => e));
      expect(denied).toMatch(
        /^Postmark: http:\/\/127\.0\.0\.1:\d+\/stats\/outbound\/sends answered 401 Unauthorized \(check the source's credential[^)]*\): No Account or Server API tokens were supplied in the HTTP headers\.$/,
      );
      expect(denied).not.toContain("wrong-postmark-token-0123");
    });

    it("a day twice, or a date that is not a day, fails the pull naming it", async () => {
      fake.failNext(1, {
        status: 200,
        body: JSON.stringify({
          Sent: 3,
          Days: [
            { Date: "2026-11-01", Sent: 1 },
            { Date: "2026-11-01", Sent: 2 },
          ],
        }),
      });
      await expect(pullPostmark(ny(fake), days, ctx(FAKE_KEYS.postmark))).rejects.toThrow(/Postmark .*Days\.1\.Date: 2026-11-01 after 2026-11-01/);
      fake.failNext(1, { status: 200, body: JSON.stringify({ Sent: 1, Days: [{ Date: "2026-11-01T05:00:00", Sent: 1 }] }) });
      await expect(pullPostmark(ny(fake), days, ctx(FAKE_KEYS.postmark))).rejects.toThrow(/not a day: '2026-11-01T05:00:00'/);
      fake.failNext(1, { status: 200, body: JSON.stringify({ Sent: 1, Days: [{ Date: "2026-11-01", Sent: 1.5 }] }) });
      await expect(pullPostmark(ny(fake), days, ctx(FAKE_KEYS.postmark))).rejects.toThrow(/Postmark sent Days\[0\]\.Sent that is not a whole number/);
    });
  });

  describe("Amazon SES", () => {
    const ses = (fake: FakeProvider, over: Partial<UsageSource> = {}) =>
      source(fake, { kind: "ses", account: "us-east-1", timeZone: "America/New_York", ...over });

    it("15-minute points summed into the source's days (New York across the DST change), signed so SES accepts it", async () => {
      fake.setSes([
        { at: "2026-10-31T03:45:00Z", deliveryAttempts: 5 }, // 23:45 on the 30th in New York: not asked
        { at: "2026-10-31T04:00:00Z", deliveryAttempts: 7 }, // 00:00 EDT on the 31st
        { at: "2026-11-01T03:45:00Z", deliveryAttempts: 11 }, // 23:45 EDT on the 31st
        { at: "2026-11-01T04:00:00Z", deliveryAttempts: 13, bounces: 2 }, // 00:00 EDT on the 1st
        { at: "2026-11-02T04:45:00Z", deliveryAttempts: 17 }, // 23:45 EST on the 1st (a 25-hour day)
        { at: "2026-11-02T05:00:00Z", deliveryAttempts: 19 }, // 00:00 EST on the 2nd
      ]);
      const rows = await pullSes(ses(fake), days, ctx(FAKE_SES_SECRET));
      expect(rows.map((r) => [r.day, r.item, r.units, r.costMicros, r.raw.points])).toEqual([
        ["2026-10-31", "DeliveryAttempts", 18, null, 2],
        ["2026-11-01", "DeliveryAttempts", 30, null, 2],
        ["2026-11-02", "DeliveryAttempts", 19, null, 1],
      ]);
      expect(rows[1]?.raw).toMatchObject({
        requestId: "c2b66ee5-63c3-11e0-a8c9-ebb79d1d0d04",
        from: "2026-11-01T04:00:00.000Z",
        to: "2026-11-02T05:00:00.000Z",
      });
      expect(fake.requests[0]?.query).toEqual({ Action: ["GetSendStatistics"], Version: ["2010-12-01"] });
      expect(fake.requests[0]?.headers.authorization).toMatch(
        /^AWS4-HMAC-SHA256 Credential=AKIAFAKESES0123456789\/20261103\/us-east-1\/ses\/aws4_request, SignedHeaders=host;x-amz-date, Signature=[0-9a-f]{64}$/,
      );
      expect(fake.requests[0]?.headers["x-amz-date"]).toBe("20261103T120000Z");
    });

    it("a zone whose midnight is at half past the UTC hour: each point on its own local day", async () => {
      fake.setSes([
        { at: "2026-10-31T18:15:00Z", deliveryAttempts: 3 }, // 23:45 in Kolkata on the 31st
        { at: "2026-10-31T18:30:00Z", deliveryAttempts: 4 }, // 00:00 on the 1st
        { at: "2026-11-01T18:15:00Z", deliveryAttempts: 5 }, // 23:45 on the 1st
      ]);
      const rows = await pullSes(ses(fake, { timeZone: "Asia/Kolkata" }), ["2026-10-31", "2026-11-01"], ctx(FAKE_SES_SECRET));
      expect(rows.map((r) => [r.day, r.units])).toEqual([
        ["2026-10-31", 3],
        ["2026-11-01", 9],
      ]);
    });

    it("another secret or key is refused by SES; the error names SES and its reason, never the secret", async () => {
      fake.setSes([]);
      const wrong = failure(await pullSes(ses(fake), days, ctx(`${FAKE_KEYS.ses.accessKeyId}:not-the-secret-key`)).catch((e: unknown) => e));
      expect(wrong).toMatch(/^Amazon SES: .* answered 403.*SignatureDoesNotMatch/);
      expect(wrong).not.toContain("not-the-secret-key");
      await expect(pullSes(ses(fake), days, ctx(`AKIAOTHERKEY00000000:${FAKE_KEYS.ses.secretAccessKey}`))).rejects.toThrow(/403.*InvalidClientTokenId/);
      await expect(pullSes(ses(fake), days, ctx("no-colon"))).rejects.toMatchObject({ code: "credential_missing" });
      await expect(pullSes(ses(fake, { account: "mars" }), days, ctx(FAKE_SES_SECRET))).rejects.toThrow(/region/);
    });

    it("the fake checks the signature as SES does: over the host, the query and the date actually sent", async () => {
      const url = new URL(`${fake.url}/?Action=GetSendStatistics&Version=2010-12-01`);
      const send = async (headers: Record<string, string>, target = url) => (await fetch(target, { headers })).status;
      const signed = (over: { url?: URL; at?: Date } = {}) =>
        signGet({ url: over.url ?? url, region: "us-east-1", service: "ses", credentials: FAKE_KEYS.ses, at: over.at ?? now });
      expect(await send(signed())).toBe(200);
      // Signed for SES's own host, sent to another: the Host differs from the one signed.
      expect(await send(signed({ url: new URL("https://email.us-east-1.amazonaws.com/?Action=GetSendStatistics&Version=2010-12-01") }))).toBe(403);
      // Signed for one action, asking another.
      expect(await send(signed(), new URL(`${fake.url}/?Action=GetSendQuota&Version=2010-12-01`))).toBe(403);
      // The date sent is not the date signed.
      expect(await send({ ...signed(), "x-amz-date": "20261103T120001Z" })).toBe(403);
    });

    it("a 429 waits as long as Retry-After says; a 5xx is asked again a second later at the soonest (one request a second)", async () => {
      fake.setSes([{ at: "2026-11-01T12:00:00Z", deliveryAttempts: 2 }]);
      fake.failNext(1, { status: 429, retryAfter: 4 });
      const first = recording(FAKE_SES_SECRET);
      expect((await pullSes(ses(fake), days, first.ctx)).map((r) => r.units)).toEqual([2]);
      expect(first.waits).toEqual([4_000]);
      fake.failNext(1, { status: 503, body: "Service Unavailable" });
      const second = recording(FAKE_SES_SECRET);
      expect((await pullSes(ses(fake), days, second.ctx)).map((r) => r.units)).toEqual([2]);
      // The first backoff of a 5xx is half a second elsewhere: SES's rate holds it to one.
      expect(second.waits).toEqual([1_000]);
    });

    it("two weeks back is all SES keeps: a pull asking a day that starts before them is refused, nothing read", async () => {
      fake.requests.length = 0;
      // 12 days back from the 3rd at noon start 12 and a half days before it: inside the two weeks.
      const twelve = Array.from({ length: 12 }, (_, i) => new Date(Date.UTC(2026, 9, 22 + i)).toISOString().slice(0, 10));
      fake.setSes([]);
      await expect(pullSes(ses(fake, { timeZone: "UTC" }), twelve, ctx(FAKE_SES_SECRET))).resolves.toEqual([]);
      await expect(pullSes(ses(fake), ["2026-10-19", "2026-10-20"], ctx(FAKE_SES_SECRET))).rejects.toMatchObject({
        code: "day_mismatch",
        message: expect.stringMatching(/two weeks.*lookback days to 12 or fewer/),
      });
      expect(fake.requests.length).toBe(1);
    });
  });

  it("the keys go only to each provider's own host or an allow-listed one", async () => {
    const refused = (p: Promise<unknown>) => expect(p).rejects.toMatchObject({ code: "host_refused" });
    const closed = { egress: { allowHosts: [] }, now };
    await refused(pullSendGrid(source(fake, { location: "https://sendgrid.example.com" }), days, { secret: FAKE_KEYS.sendgrid, ...closed }));
    await refused(pullSendGrid(source(fake, {}), days, { secret: FAKE_KEYS.sendgrid, ...closed }));
    await refused(
      pullPostmark(source(fake, { kind: "postmark", timeZone: "America/New_York", location: "https://api.postmarkapp.com.example.com" }), days, {
        secret: FAKE_KEYS.postmark,
        ...closed,
      }),
    );
    await expect(
      pullSes(source(fake, { kind: "ses", account: "eu-west-1", location: "https://email.us-east-1.amazonaws.com" }), days, {
        secret: FAKE_SES_SECRET,
        ...closed,
      }),
    ).rejects.toMatchObject({
      code: "host_refused",
      message: expect.stringMatching(/email\.eu-west-1\.amazonaws\.com/),
    });
  });
});

describe("SES's XML, read strictly", () => {
  const doc = (points: string, meta = "<ResponseMetadata><RequestId>req-1</RequestId></ResponseMetadata>") =>
    `<?xml version="1.0"?>\n<GetSendStatisticsResponse xmlns="http://ses.amazonaws.com/doc/2010-12-01/"><GetSendStatisticsResult><SendDataPoints>${points}</SendDataPoints></GetSendStatisticsResult>${meta}</GetSendStatisticsResponse>`;
  const point = (inner: string) => `<member>${inner}</member>`;

  it("reads AWS's documented example", () => {
    // The GetSendStatistics example of the SES API reference (2010-12-01).
    const example = `<GetSendStatisticsResponse xmlns="http://ses.amazonaws.com/doc/2010-12-01/">
  <GetSendStatisticsResult>
    <SendDataPoints>
      <member>
        <DeliveryAttempts>8</DeliveryAttempts>
        <Timestamp>2011-08-03T19:23:00Z</Timestamp>
        <Rejects>0</Rejects>
        <Bounces>0</Bounces>
        <Complaints>0</Complaints>
      </member>
      <member>
        <DeliveryAttempts>7</DeliveryAttempts>
        <Timestamp>2011-08-03T06:53:00Z</Timestamp>
        <Rejects>0</Rejects>
        <Bounces>0</Bounces>
        <Complaints>0</Complaints>
      </member>
    </SendDataPoints>
  </GetSendStatisticsResult>
  <ResponseMetadata>
    <RequestId>c2b66ee5-63c3-11e0-a8c9-ebb79d1d0d04</RequestId>
  </ResponseMetadata>
</GetSendStatisticsResponse>`;
    expect(sesDataPoints(example)).toEqual({
      requestId: "c2b66ee5-63c3-11e0-a8c9-ebb79d1d0d04",
      points: [
        { at: new Date("2011-08-03T19:23:00Z"), deliveryAttempts: 8 },
        { at: new Date("2011-08-03T06:53:00Z"), deliveryAttempts: 7 },
      ],
    });
    expect(sesDataPoints(doc("").replace("<SendDataPoints></SendDataPoints>", "<SendDataPoints/>")).points).toEqual([]);
    // The counts are documented optional: an absent one is none.
    expect(sesDataPoints(doc(point("<Timestamp>2026-11-01T00:00:00Z</Timestamp>"))).points).toEqual([
      { at: new Date("2026-11-01T00:00:00Z"), deliveryAttempts: 0 },
    ]);
  });

  it.each([
    [
      "an element it does not document",
      doc(point("<Timestamp>2026-11-01T00:00:00Z</Timestamp><DeliveryAttempts>1</DeliveryAttempts><Cost>9</Cost>")),
      /an element SES does not document here: <Cost>/,
    ],
    [
      "an element twice",
      doc(point("<Timestamp>2026-11-01T00:00:00Z</Timestamp><DeliveryAttempts>1</DeliveryAttempts><DeliveryAttempts>2</DeliveryAttempts>")),
      /<DeliveryAttempts> twice/,
    ],
    ["a point without its time", doc(point("<DeliveryAttempts>1</DeliveryAttempts>")), /Timestamp: not an ISO 8601 instant/],
    [
      "a time that is not an instant",
      doc(point("<Timestamp>yesterday</Timestamp><DeliveryAttempts>1</DeliveryAttempts>")),
      /not an ISO 8601 instant: 'yesterday'/,
    ],
    [
      "a count that is not whole",
      doc(point("<Timestamp>2026-11-01T00:00:00Z</Timestamp><DeliveryAttempts>1.5</DeliveryAttempts>")),
      /DeliveryAttempts that is not a whole number/,
    ],
    ["text beside the members", doc(`${point("<Timestamp>2026-11-01T00:00:00Z</Timestamp>")}stray`), /something other than members: stray/],
    ["a member nested in a member", doc(point("<Timestamp>2026-11-01T00:00:00Z</Timestamp><member></member>")), /something other than its elements/],
    ["CDATA", doc(point("<Timestamp>2026-11-01T00:00:00Z</Timestamp><DeliveryAttempts><![CDATA[1]]></DeliveryAttempts>")), /CDATA/],
    ["an entity", doc(point("<Timestamp>2026-11-01T00:00:00Z</Timestamp><DeliveryAttempts>&#49;</DeliveryAttempts>")), /entity/],
    ["no RequestId", doc(point("<Timestamp>2026-11-01T00:00:00Z</Timestamp>"), ""), /not GetSendStatisticsResponse/],
    ["an error document", `<ErrorResponse><Error><Code>Throttling</Code></Error><RequestId>x</RequestId></ErrorResponse>`, /not GetSendStatisticsResponse/],
  ])("refuses %s", (_what, xml, message) => {
    expect(() => sesDataPoints(xml)).toThrow(message);
  });
});
