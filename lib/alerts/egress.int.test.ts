import { eq } from "drizzle-orm";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { alertDeliveries, alertDestinations } from "@/db/schema";
import { skipWithoutDatabase } from "@/db/testing";
import { useTestDatabase } from "@/db/testing-suite";
import { deliverDueAlerts, type DeliverySettings } from "./delivery";
import { createDestination } from "./destinations";
import { checkDestinationUrl, EgressRefused, isForbiddenAddress, MAX_EXCERPT, sanitiseExcerpt, type EgressPolicy } from "./egress";
import { fireAlert } from "./fire";
import { startReceiver, type TestReceiver } from "./test-receiver";

const admin = { type: "staff", email: "admin@test.local" } as const;

describe("isForbiddenAddress", () => {
  it("refuses loopback, link-local, private, metadata and mapped forms of them", () => {
    for (const a of [
      "127.0.0.1",
      "127.9.9.9",
      "10.1.2.3",
      "172.16.0.1",
      "172.31.255.255",
      "192.168.1.1",
      "169.254.169.254",
      "100.64.0.1",
      "0.0.0.0",
      "::1",
      "::",
      "fe80::1",
      "fd00:ec2::254",
      "::ffff:127.0.0.1",
      "::ffff:10.0.0.1",
      "not-an-ip",
    ]) {
      expect(isForbiddenAddress(a), a).toBe(true);
    }
    for (const a of ["93.184.216.34", "8.8.8.8", "172.32.0.1", "2606:4700::1111"]) expect(isForbiddenAddress(a), a).toBe(false);
  });

  it("keeps only a short printable excerpt of a response, personal data masked", () => {
    const excerpt = sanitiseExcerpt(`{"secret":"x"}\u0000\n\r${"A".repeat(5000)} jane@example.com`);
    expect(excerpt.length).toBeLessThanOrEqual(MAX_EXCERPT + 1);
    expect([...excerpt].every((c) => (c >= " " && c <= "~") || c === "…")).toBe(true);
    expect(sanitiseExcerpt("error for jane@example.com")).toBe("error for j***@e***.com");
  });
});

describe("checkDestinationUrl", () => {
  const policy = (addresses: string[], allowHosts: string[] = []): EgressPolicy => ({ allowHosts, resolve: async () => addresses });

  it("refuses a name resolving inside, unless the host is allow-listed", async () => {
    await expect(checkDestinationUrl("https://hooks.example.com/x", policy(["10.0.0.5"]))).rejects.toThrow(EgressRefused);
    await expect(checkDestinationUrl("https://hooks.example.com/x", policy(["93.184.216.34", "127.0.0.1"]))).rejects.toThrow(EgressRefused);
    await expect(checkDestinationUrl("http://169.254.169.254/latest/meta-data", policy([]))).rejects.toThrow(EgressRefused);
    await expect(checkDestinationUrl("http://[::1]:3000/api", policy([]))).rejects.toThrow(EgressRefused);
    await expect(checkDestinationUrl("https://hooks.example.com/x", policy(["93.184.216.34"]))).resolves.toBeUndefined();
    await expect(checkDestinationUrl("http://receiver.internal/x", policy(["10.0.0.5"], ["receiver.internal"]))).resolves.toBeUndefined();
  });
});

describe.skipIf(skipWithoutDatabase())("webhook egress on real sockets", () => {
  const t = useTestDatabase("alert_egress", { max: 4 });
  let receiver: TestReceiver;
  beforeAll(async () => {
    receiver = await startReceiver();
  });
  afterAll(async () => {
    await receiver?.close();
  });
  afterEach(async () => {
    await t.db.delete(alertDestinations);
  });
  const settings = (egress: EgressPolicy): DeliverySettings => ({ retryBaseMs: 5, retryCapMs: 20, maxAttempts: 1, timeoutMs: 2000, egress });

  it("refuses to save a loopback destination, and saves it when an admin allow-lists the host", async () => {
    const input = { name: "self", kind: "webhook" as const, target: receiver.url };
    await expect(createDestination(t.db, { input, actor: admin, egress: { allowHosts: [] } })).rejects.toMatchObject({ code: "invalid_input" });
    expect(await t.db.select().from(alertDestinations)).toEqual([]);
    await expect(createDestination(t.db, { input, actor: admin, egress: { allowHosts: ["127.0.0.1"] } })).resolves.toMatchObject({ target: receiver.url });
  });

  it("refuses at delivery time a name that rebinds to loopback after it was saved", async () => {
    // Saved while the name resolved to a public address; the resolver now answers 127.0.0.1.
    const port = new URL(receiver.url).port;
    const target = `http://rebind.example:${port}/hook`;
    let answer = "93.184.216.34";
    const egress: EgressPolicy = { allowHosts: [], resolve: async () => [answer] };
    await createDestination(t.db, { input: { name: "rebind", kind: "webhook", target }, actor: admin, egress });
    answer = "127.0.0.1";
    const before = receiver.received.length;
    expect(await fireAlert(t.db, { kind: "threshold", dedupeKey: `rebind:${Date.now()}`, message: "m", details: {} })).toBe(true);
    await deliverDueAlerts(t.db, settings(egress));
    expect(receiver.received.length).toBe(before);
    const [row] = await t.db.select().from(alertDeliveries).where(eq(alertDeliveries.state, "failed"));
    expect(row?.lastError).toMatch(/^refused: .*127\.0\.0\.1/);
  });

  it("stores only the status and a bounded excerpt of what a destination answered", async () => {
    const noisy = await startReceiver({ failFirst: 1000 });
    try {
      await createDestination(t.db, { input: { name: "noisy", kind: "webhook", target: noisy.url }, actor: admin, egress: { allowHosts: ["127.0.0.1"] } });
      expect(await fireAlert(t.db, { kind: "threshold", dedupeKey: `noisy:${Date.now()}`, message: "m", details: {} })).toBe(true);
      await deliverDueAlerts(t.db, settings({ allowHosts: ["127.0.0.1"] }));
      const rows = await t.db.select().from(alertDeliveries).where(eq(alertDeliveries.state, "failed"));
      const last = rows.at(-1)?.lastError ?? "";
      expect(last).toBe("HTTP 500: receiver is down");
      expect(last.length).toBeLessThanOrEqual(MAX_EXCERPT + 20);
    } finally {
      await noisy.close();
    }
  });
});
