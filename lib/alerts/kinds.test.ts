import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { InboxFilters } from "./inbox";
import { alertKindLabels, alertKinds, alertLinks, isAlertKind } from "./kinds";

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
    const ruled = alertLinks({
      endpointKey: "sms.reset",
      windowStart: null,
      createdAt: new Date("2025-03-04T15:00:00Z"),
      details: { from: "2025-03-04T14:55:00Z", to: "2025-03-04T15:00:00Z" },
    });
    expect(new URL(ruled?.refusals ?? "", "http://x").searchParams.get("from")).toBe("2025-03-04T14:55:00.000Z");
    const plain = alertLinks({ endpointKey: "sms.reset", windowStart: null, createdAt: new Date("2025-03-04T15:00:00Z"), details: null });
    expect(new URL(plain?.refusals ?? "", "http://x").searchParams.get("from")).toBe("2025-03-04T14:00:00.000Z");
  });

  it("are absent for alerts about no endpoint (a silent worker)", () => {
    expect(alertLinks({ endpointKey: null, windowStart: null, createdAt: new Date(), details: null })).toBeNull();
    // A reconciliation alert opens the endpoint's billed-beside-charged chart, on the provider's day.
    const recon = alertLinks({
      kind: "reconciliation",
      endpointKey: "llm.chat",
      windowStart: null,
      createdAt: new Date("2025-03-05T09:00:00Z"),
      details: { from: "2025-03-04T05:00:00Z", to: "2025-03-05T05:00:00Z" },
    });
    expect(recon?.chart).toBe("/endpoints/llm.chat#reconciliation");
    expect(recon?.refusals).toContain(encodeURIComponent("2025-03-04T05:00:00.000Z"));
  });
});

describe("alert kinds", () => {
  // Every kind the database can fire: the literals passed to ceilings.fire_alert in db/functions/
  // and in the SQL of lib/ (the worker's rules), and the kinds lib/ passes to fireAlert. Each must be in alertKinds, so the inbox's filter offers it, with its own label.
  function firedKinds(): Set<string> {
    const sources = [
      ...readdirSync(new URL("../../db/functions/", import.meta.url))
        .filter((f) => f.endsWith(".sql"))
        .map((f) => readFileSync(new URL(`../../db/functions/${f}`, import.meta.url), "utf8")),
      ...readdirSync(new URL("../", import.meta.url), { recursive: true, encoding: "utf8" })
        .filter((f) => f.endsWith(".ts") && !f.includes(".test.") && !f.includes("fixture"))
        .map((f) => readFileSync(new URL(`../${f}`, import.meta.url), "utf8")),
    ].join("\n");
    const fired = new Set<string>();
    for (const m of sources.matchAll(/fire_alert\(\s*'([a-z_]+)'/g)) if (m[1]) fired.add(m[1]);
    // A rule that picks its kind in SQL: case ... then 'kill' else 'restore' end, inside fire_alert(.
    for (const call of sources.matchAll(/fire_alert\(\s*case [^\n]*? end/g)) {
      for (const m of call[0].matchAll(/(?:then|else) '([a-z_]+)'/g)) if (m[1]) fired.add(m[1]);
    }
    for (const m of sources.matchAll(/(?:kind|\w+): AlertKind = "([a-z_]+)"/g)) if (m[1]) fired.add(m[1]);
    for (const m of sources.matchAll(/fireAlert\(\w+, \{\s*kind: "([a-z_]+)"/g)) if (m[1]) fired.add(m[1]);
    return fired;
  }

  it("name every kind the SQL functions and the rules fire, each with a label and a filter entry", () => {
    const fired = firedKinds();
    for (const kind of [
      "threshold",
      "budget_threshold",
      "overrun",
      "expiry",
      "kill",
      "restore",
      "budget_kill",
      "budget_restore",
      "budget_adjustment",
      "worker_silent",
    ]) {
      expect(fired, `the scan finds ${kind}`).toContain(kind);
    }
    for (const kind of fired) {
      expect(alertKinds, `${kind} is fired but not in alertKinds`).toContain(kind);
      expect(InboxFilters.parse({ kind }).kind, `${kind} is a filter entry`).toBe(kind);
      const label = isAlertKind(kind) ? alertKindLabels[kind] : undefined;
      expect(label, `${kind} has a label`).toMatch(/^[A-Z][a-z]/);
    }
  });

  it("give every kind its own label", () => {
    const labels = alertKinds.map((k) => alertKindLabels[k]);
    expect(new Set(labels).size).toBe(labels.length);
    for (const l of labels) expect(l.trim().length).toBeGreaterThan(0);
  });
});

describe("budget alert links", () => {
  it("point to the budget's page, its spend chart and its refusals", () => {
    const links = alertLinks({
      kind: "budget_kill",
      endpointKey: null,
      windowStart: null,
      createdAt: new Date(),
      details: { budget: "llm-daily", budgetId: 3 },
    });
    expect(links).toEqual({ chart: "/budgets/llm-daily#spend", refusals: "/budgets/llm-daily#refusals" });
    const threshold = alertLinks({
      kind: "budget_threshold",
      endpointKey: null,
      windowStart: new Date(),
      createdAt: new Date(),
      details: { budget: "llm-daily" },
    });
    expect(threshold?.chart).toBe("/budgets/llm-daily#spend");
    // Another kind's details may name a budget; its links stay the endpoint's.
    expect(alertLinks({ kind: "change_request", endpointKey: "sms.reset", windowStart: null, createdAt: new Date(), details: { budget: "x" } })?.chart).toBe(
      "/endpoints/sms.reset#spend",
    );
  });
});

describe("unmapped money alert links", () => {
  it("open the source's unmapped items, in the inbox, Slack, a webhook and an email; nothing without a source", async () => {
    const alert = {
      id: 9,
      kind: "reconciliation_unmapped",
      message: "OpenAI billed $500.00 on items no rule maps",
      endpointKey: null,
      ceilingId: null,
      windowStart: null,
      createdAt: new Date("2026-11-02T06:00:00Z"),
      details: { sourceId: 3 },
    };
    expect(alertLinks(alert)).toEqual({ mapIt: "/reconciliation/sources/3#unmapped" });
    expect(alertLinks({ ...alert, details: { sourceId: "3" } })).toBeNull();
    const { absoluteLinks, slackBody, webhookBody } = await import("./payload");
    const { emailMessage } = await import("./email");
    expect(absoluteLinks(alert, "https://ceilings.example/")).toEqual({ mapIt: "https://ceilings.example/reconciliation/sources/3#unmapped" });
    expect(slackBody(alert, "https://ceilings.example")).toContain("<https://ceilings.example/reconciliation/sources/3#unmapped|map the items>");
    expect(JSON.parse(webhookBody(alert, "https://ceilings.example")).links).toEqual({ mapIt: "https://ceilings.example/reconciliation/sources/3#unmapped" });
    const email = emailMessage(alert, "https://ceilings.example");
    expect(email.text).toContain("Map the items to endpoints: https://ceilings.example/reconciliation/sources/3#unmapped");
    expect(email.html).not.toContain("Spend chart");
  });
});
