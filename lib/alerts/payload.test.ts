import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { buildRequest, retryDelayMs, SIGNATURE_HEADER, signPayload, slackBody, TIMESTAMP_HEADER, verifySignature, type OutgoingAlert } from "./payload";

const alert: OutgoingAlert = {
  id: 7,
  kind: "threshold",
  message: "email.subscribe reached 80% of its ceiling: 80 of 100 emails per UTC day",
  endpointKey: "email.subscribe",
  ceilingId: 3,
  windowStart: new Date("2025-03-04T00:00:00Z"),
  createdAt: new Date("2025-03-04T15:00:00Z"),
  details: { percent: 80, windowEnd: "2025-03-05T00:00:00Z" },
};

describe("webhook signature", () => {
  it("is the hex HMAC-SHA256 of '<timestamp>.<raw body>' with the destination's secret", () => {
    const expected = createHmac("sha256", "secret-1").update('1700000000.{"a":1}').digest("hex");
    expect(signPayload("secret-1", 1_700_000_000, '{"a":1}')).toBe(`sha256=${expected}`);
  });

  it("signs the exact body sent, with the timestamp header that was signed", () => {
    const r = buildRequest({ kind: "webhook", alert, destinationId: 2, signingSecret: "k".repeat(32), nowSeconds: 1_700_000_000 });
    expect(r.headers[TIMESTAMP_HEADER]).toBe("1700000000");
    const ok = verifySignature({
      secret: "k".repeat(32),
      timestamp: "1700000000",
      signature: r.headers[SIGNATURE_HEADER] ?? null,
      body: r.body,
      nowSeconds: 1_700_000_010,
    });
    expect(ok).toBe(true);
  });

  it("rejects another secret, a changed body, a changed timestamp and an old timestamp", () => {
    const body = '{"id":1}';
    const sig = signPayload("right", 1000, body);
    expect(verifySignature({ secret: "wrong", timestamp: "1000", signature: sig, body, nowSeconds: 1000 })).toBe(false);
    expect(verifySignature({ secret: "right", timestamp: "1000", signature: sig, body: '{"id":2}', nowSeconds: 1000 })).toBe(false);
    expect(verifySignature({ secret: "right", timestamp: "1001", signature: sig, body, nowSeconds: 1001 })).toBe(false);
    expect(verifySignature({ secret: "right", timestamp: "1000", signature: sig, body, nowSeconds: 1000 + 301 })).toBe(false);
    expect(verifySignature({ secret: "right", timestamp: "1000", signature: sig, body, nowSeconds: 1000 })).toBe(true);
  });

  it("sends no signature headers to Slack, which does not check them", () => {
    const r = buildRequest({ kind: "slack", alert, destinationId: 2, signingSecret: null, nowSeconds: 1 });
    expect(r.headers[SIGNATURE_HEADER]).toBeUndefined();
    expect(JSON.parse(r.body)).toMatchObject({ text: `Threshold crossed: ${alert.message}` });
  });
});

describe("Slack body", () => {
  it("has text for the notification and blocks with links to the chart and refusals when the dashboard URL is known", () => {
    const body = JSON.parse(slackBody(alert, "https://ceilings.example.com/"));
    expect(body.text).toBe(`Threshold crossed: ${alert.message}`);
    const context = JSON.stringify(body.blocks[1]);
    expect(context).toContain("https://ceilings.example.com/endpoints/email.subscribe#spend");
    expect(context).toContain("https://ceilings.example.com/refusals?endpoint=email.subscribe");
  });
});

describe("retry backoff", () => {
  const s = { baseMs: 30_000, capMs: 3_600_000 };
  it("doubles from the base with each attempt, between half and all of it", () => {
    expect(retryDelayMs({ ...s, attempts: 1, random: () => 1 })).toBe(30_000);
    expect(retryDelayMs({ ...s, attempts: 2, random: () => 1 })).toBe(60_000);
    expect(retryDelayMs({ ...s, attempts: 4, random: () => 1 })).toBe(240_000);
    expect(retryDelayMs({ ...s, attempts: 4, random: () => 0 })).toBe(120_000);
  });
  it("is capped, however many attempts", () => {
    expect(retryDelayMs({ ...s, attempts: 12, random: () => 1 })).toBe(3_600_000);
    expect(retryDelayMs({ ...s, attempts: 1000, random: () => 1 })).toBe(3_600_000);
  });
});
