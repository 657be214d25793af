import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import { PullsTable, RawRowsTable, RulesTable, UnmappedTable } from "./source-tables";

// A source's tables render from prepared data alone: who may act sees the buttons, an item with
// characters of its own is linked to the add-rule form intact, and a row without money says so
// instead of showing $0.

const at = new Date("2026-12-02T06:00:00Z");
const rule = { id: 7, match: "gpt-4o*", endpointKey: "llm.gpt-4o", budgetKey: null, part: null, fieldParts: {}, createdBy: "a@example.com", createdAt: at };

describe("source tables", () => {
  it("rules: a remove button for admins only, the target linked", () => {
    const admin = renderToStaticMarkup(<RulesTable rules={[rule]} sourceId={3} isAdmin />);
    const viewer = renderToStaticMarkup(<RulesTable rules={[rule]} sourceId={3} isAdmin={false} />);
    expect(admin).toContain('data-testid="remove-rule-7"');
    expect(viewer).not.toContain("remove-rule-7");
    expect(viewer).toContain('href="/endpoints/llm.gpt-4o"');
    expect(renderToStaticMarkup(<RulesTable rules={[]} sourceId={3} isAdmin />)).toContain("No rules yet");
  });

  it("unmapped: Map it opens the add-rule form with the item, encoded", () => {
    const html = renderToStaticMarkup(
      <UnmappedTable
        items={[{ item: "o3 & co/#1", rows: 2, units: 12, unit: null, costMicros: null, lastDay: "2026-12-01" }]}
        currency="USD"
        path="/reconciliation/sources/3"
        isAdmin
      />,
    );
    expect(html).toContain('href="/reconciliation/sources/3?map=o3%20%26%20co%2F%231#add-rule"');
    expect(html).toContain("not reported");
    expect(
      renderToStaticMarkup(
        <UnmappedTable items={[{ item: "x", rows: 1, units: 1, unit: null, costMicros: 0, lastDay: "2026-12-01" }]} currency="USD" path="/p" isAdmin={false} />,
      ),
    ).not.toContain("Map it");
  });

  it("pulled days link to their raw rows; raw rows show money or its absence", () => {
    expect(
      renderToStaticMarkup(<PullsTable pulls={[{ day: "2026-12-01", pulledAt: at, via: "file", rows: 3, unmappedRows: 1 }]} path="/p" shownDay="2026-12-01" />),
    ).toContain('href="/p?day=2026-12-01#raw"');
    const raw = renderToStaticMarkup(
      <RawRowsTable
        rows={[
          {
            id: 1,
            item: "o3",
            field: null,
            units: 5,
            unit: null,
            costMicros: 2_500_000,
            rollup: false,
            endpointKey: null,
            budgetKey: "llm.all",
            part: null,
            raw: { model: "o3" },
          },
        ]}
        currency="USD"
      />,
    );
    expect(raw).toContain("$2.50");
    expect(raw).toContain('href="/budgets/llm.all"');
  });

  it("a rule shows the parts its fields are priced at; a raw row its field, unit, part, or that it is a roll-up", () => {
    expect(renderToStaticMarkup(<RulesTable rules={[{ ...rule, fieldParts: { "cache-read": "cached" } }]} sourceId={3} isAdmin={false} />)).toContain(
      "cache-read at cached",
    );
    const row = {
      id: 2,
      item: "claude-sonnet-4",
      field: "cache-read",
      units: 900,
      unit: null,
      costMicros: null,
      rollup: false,
      endpointKey: "llm.chat",
      budgetKey: null,
      part: "cached",
      raw: {},
    };
    const html = renderToStaticMarkup(
      <RawRowsTable
        rows={[row, { ...row, id: 3, item: "sms", field: null, unit: "segments", units: 40, costMicros: 300_000, rollup: true, endpointKey: null, part: null }]}
        currency="USD"
      />,
    );
    expect(html).toContain("priced at cached");
    expect(html).toContain("40 segments");
    expect(html).toContain("roll-up: billed through its leaves");
  });
});
