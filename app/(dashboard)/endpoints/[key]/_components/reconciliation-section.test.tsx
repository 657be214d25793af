import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import type { EndpointReconciliation, ReconDay } from "@/lib/reconciliation/read";
import { ReconciliationSection } from "./reconciliation-section";

// The endpoint's Reconciliation section as the server sends it: the source it links to, the last
// 7 days with their drift and which way, or where to connect a source when none maps it.

// An amount's <data> is inline: it adds no space, as in the browser.
const text = (html: string) =>
  html
    .replace(/<\/?data[^>]*>/g, "")
    .replace(/<[^>]+>/g, " ")
    .replaceAll("&#x27;", "'")
    .replaceAll("&lt;", "<")
    .replace(/\s+/g, " ");
const NOW = new Date("2026-03-10T12:00:00Z");

function recon(days: Partial<ReconDay>[], source: EndpointReconciliation["source"]): EndpointReconciliation {
  const all = days.map((d, i) => ({
    day: `2026-03-0${i + 1}`,
    billedUnits: null,
    billedMicros: null,
    chargedUnits: null,
    chargedMicros: null,
    drift: null,
    held: 0,
    final: true,
    ...d,
  }));
  const series = { unit: "tokens", currency: "USD", timeZone: "UTC", days: all };
  return { source, ranges: { 30: series, 90: series } };
}

describe("reconciliation section", () => {
  it("links the source and writes the last days out, newest first, with drift and which way", () => {
    const drift = { diffUnits: 100, diffMicros: 1_000_000, percent: 10, over: true, direction: "billed_more" as const };
    const held = { diffUnits: 0, diffMicros: 0, percent: 0, over: false, direction: "even" as const };
    const r = recon(
      [
        { billedUnits: 5, billedMicros: 50, chargedUnits: 5, chargedMicros: 50, held: 2, drift: held },
        {},
        { billedUnits: 1000, billedMicros: 10_000_000, chargedUnits: 900, chargedMicros: 9_000_000, drift },
      ],
      {
        id: 3,
        name: "openai-prod",
        kind: "openai",
        timeZone: "UTC",
        lastPullOkAt: new Date("2026-03-10T11:00:00Z"),
        lastPullError: null,
      },
    );
    const html = renderToStaticMarkup(<ReconciliationSection endpointKey="llm.gpt-4o" reconciliation={r} now={NOW} />);
    expect(html).toContain('id="reconciliation"');
    expect(html).toContain('href="/reconciliation/sources/3"');
    const words = text(html);
    expect(words).toContain("Reported by openai-prod (OpenAI organization usage and costs API; days in UTC). Last pulled 60 min ago.");
    expect(words).toContain(
      "Mar 3 1,000 tokens · $10.00 900 tokens · $9.00 +10.0 % past the threshold more billed than charged: calls bypass Ceilings or settle low",
    );
    expect(words).toContain("Mar 2 not reported not compared not compared");
    // 50 micros is not $0.00: it reads as under a cent, the exact amount in its title.
    expect(words).toContain("Mar 1 5 tokens · < $0.01 5 tokens · < $0.01 (2 still held)");
    expect(html).toContain('<data value="0.000050" title="Exactly $0.000050"');
    expect(html.indexOf('data-day="2026-03-03"')).toBeLessThan(html.indexOf('data-day="2026-03-02"'));
  });

  it("a day that may still move is 'not final', never 'past the threshold'", () => {
    const drift = { diffUnits: -300, diffMicros: -3_000_000, percent: -100, over: true, direction: "charged_more" as const };
    const r = recon([{ billedUnits: 0, billedMicros: 0, chargedUnits: 300, chargedMicros: 3_000_000, drift, final: false }], {
      id: 3,
      name: "openai-prod",
      kind: "openai",
      timeZone: "UTC",
      lastPullOkAt: new Date("2026-03-10T11:00:00Z"),
      lastPullError: null,
    });
    const html = renderToStaticMarkup(<ReconciliationSection endpointKey="llm.gpt-4o" reconciliation={r} now={NOW} />);
    expect(text(html)).toContain("−100.0 % not final");
    expect(text(html)).toContain("−100.0 %, not final");
    expect(text(html)).toContain("none past the threshold");
    expect(text(html)).not.toContain("% past the threshold");
    expect(text(html)).not.toContain("%, past the threshold");
    expect(html).toContain('data-over="false"');
    expect(html).toContain('data-final="false"');
  });

  it("a failed pull is said; no source at all says where to connect one", () => {
    const failed = recon([{}], { id: 4, name: "twilio", kind: "twilio", timeZone: "UTC", lastPullOkAt: null, lastPullError: "HTTP 401: bad credentials" });
    expect(text(renderToStaticMarkup(<ReconciliationSection endpointKey="sms.send" reconciliation={failed} now={NOW} />))).toContain(
      "Last pull failed: HTTP 401: bad credentials",
    );
    const none = text(renderToStaticMarkup(<ReconciliationSection endpointKey="sms.send" reconciliation={recon([{}], null)} now={NOW} />));
    expect(none).toContain("No usage source maps sms.send");
    expect(none).toContain("No source reports this endpoint's usage yet");
    expect(none).not.toContain("Last 7 days");
  });
});
