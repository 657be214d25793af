import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it, vi } from "vitest";
import type { ProviderCap } from "@/lib/reconciliation/types";
import { microsAsDecimal } from "./provider-cap-form";
import { SecondCapCard, secondCapSentence } from "./second-cap-card";

// The second cap as the server first sends it: the verdict in a sentence for every state, the
// record, and the form for admins only. The actions' own tests are provider-cap-actions.int.test.ts.
vi.mock("../provider-cap-action-core", () => ({}));

const text = (html: string) =>
  html
    .replace(/<[^>]+>/g, " ")
    .replaceAll("&#x27;", "'")
    .replaceAll("&gt;", ">")
    .replace(/\s+/g, " ");

const cap: ProviderCap = {
  endpointId: 1,
  measure: "money",
  window: "month",
  amount: 250_500_000,
  setAt: "OpenAI project llm-prod, Settings > Limits",
  recordedBy: "ada@example.com",
  recordedAt: new Date("2026-03-01T10:00:00Z"),
};

describe("second cap card", () => {
  it("says each verdict as a sentence", () => {
    expect(secondCapSentence({ state: "missing" })).toContain("No second cap is recorded");
    expect(secondCapSentence({ state: "above", capText: "$250.50 a month", worstText: "$31.00 a month" })).toBe(
      "The provider stops at $250.50 a month, above Ceilings' worst case of $31.00 a month: a backstop, as it should be.",
    );
    expect(secondCapSentence({ state: "below", capText: "$10.00 a month", worstText: "$31.00 a month" })).toContain(
      "below Ceilings' worst case of $31.00 a month: the provider binds first",
    );
    expect(secondCapSentence({ state: "unbounded", capText: "$10.00 a day" })).toContain("no global ceiling bounds that window");
  });

  it("shows the record to everyone and the form to admins only", () => {
    const props = {
      endpointKey: "llm.gpt-4o",
      unit: "tokens",
      currency: "USD",
      cap,
      verdict: { state: "above", capText: "$250.50 a month", worstText: "$31.00 a month" } as const,
    };
    const viewer = renderToStaticMarkup(<SecondCapCard {...props} isAdmin={false} />);
    expect(viewer).toContain('data-state="above"');
    expect(text(viewer)).toContain("Limit $250.50 per month Where it is set OpenAI project llm-prod, Settings > Limits");
    expect(viewer).not.toContain("provider-cap-form");
    const admin = renderToStaticMarkup(<SecondCapCard {...props} isAdmin />);
    expect(admin).toContain('data-testid="provider-cap-form"');
    expect(admin).toContain('value="250.5"');
    expect(admin).toContain('data-testid="provider-cap-remove"');
    const none = renderToStaticMarkup(<SecondCapCard {...props} cap={null} verdict={{ state: "missing" }} isAdmin />);
    expect(none).toContain('data-state="missing"');
    expect(text(none)).toContain("Record the second cap");
    expect(none).not.toContain("provider-cap-remove");
  });

  it("writes micros back as the decimal typed, exactly", () => {
    expect([250_500_000, 1, 1_000_000, 0, 123_456_789].map(microsAsDecimal)).toEqual(["250.5", "0.000001", "1", "0", "123.456789"]);
  });
});
