import { describe, expect, it } from "vitest";
import { alertLinks } from "./kinds";

describe("alert links", () => {
  it("link a windowed alert to its chart and to refusals from the window start until it fired", () => {
    const links = alertLinks({
      endpointKey: "email.subscribe",
      windowStart: new Date("2025-03-04T00:00:00Z"),
      createdAt: new Date("2025-03-04T15:00:00Z"),
      details: { windowEnd: "2025-03-05T00:00:00Z" },
    });
    expect(links?.chart).toBe("/endpoints/email.subscribe#spend");
    const url = new URL(links?.refusals ?? "", "http://x");
    expect(url.pathname).toBe("/refusals");
    expect(url.searchParams.get("endpoint")).toBe("email.subscribe");
    expect(url.searchParams.get("from")).toBe("2025-03-04T00:00:00.000Z");
    expect(url.searchParams.get("to")).toBe("2025-03-04T15:01:00.000Z");
  });

  it("use the span a rule counted over, else the hour before the alert", () => {
    const ruled = alertLinks({ endpointKey: "sms.reset", windowStart: null, createdAt: new Date("2025-03-04T15:00:00Z"), details: { from: "2025-03-04T14:55:00Z", to: "2025-03-04T15:00:00Z" } });
    expect(new URL(ruled?.refusals ?? "", "http://x").searchParams.get("from")).toBe("2025-03-04T14:55:00.000Z");
    const plain = alertLinks({ endpointKey: "sms.reset", windowStart: null, createdAt: new Date("2025-03-04T15:00:00Z"), details: null });
    expect(new URL(plain?.refusals ?? "", "http://x").searchParams.get("from")).toBe("2025-03-04T14:00:00.000Z");
  });

  it("are absent for alerts about no endpoint (a silent worker)", () => {
    expect(alertLinks({ endpointKey: null, windowStart: null, createdAt: new Date(), details: null })).toBeNull();
    // A reconciliation alert opens the endpoint's billed-beside-charged chart, on the provider's day.
    const recon = alertLinks({ kind: "reconciliation", endpointKey: "llm.chat", windowStart: null, createdAt: new Date("2025-03-05T09:00:00Z"), details: { from: "2025-03-04T05:00:00Z", to: "2025-03-05T05:00:00Z" } });
    expect(recon?.chart).toBe("/endpoints/llm.chat#reconciliation");
    expect(recon?.refusals).toContain(encodeURIComponent("2025-03-04T05:00:00.000Z"));
  });
});

describe("alert kinds", () => {
  it("name every kind the SQL functions and the rules fire, so the inbox can filter by each", async () => {
    const { alertKinds } = await import("./kinds");
    const { readFileSync } = await import("node:fs");
    const sources = ["rules.ts", "reconcile.ts", "heartbeat.ts", "digest.ts"].map((f) => readFileSync(new URL(f, import.meta.url), "utf8")).join("\n");
    const migration = readFileSync(new URL("../../db/migrations/0001_enforcement_functions.sql", import.meta.url), "utf8");
    const fired = new Set<string>();
    for (const m of migration.matchAll(/fire_alert\('([a-z_]+)'/g)) if (m[1]) fired.add(m[1]);
    for (const m of sources.matchAll(/kind: "([a-z_]+)"/g)) if (m[1]) fired.add(m[1]);
    for (const m of sources.matchAll(/fire_alert\('([a-z_]+)'/g)) if (m[1]) fired.add(m[1]);
    expect(fired.size).toBeGreaterThanOrEqual(8);
    for (const kind of fired) expect(alertKinds).toContain(kind);
  });
});
