import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parseCatalogText } from "@/lib/catalog";

// A catalog file is reviewed as text: an object with a key twice reads one way to the reviewer
// (the first) and applies another (JSON.parse keeps the last). The HTTP API refuses such a body as
// duplicate_field; the catalog file must not apply it either.

const demoText = readFileSync(path.join(import.meta.dirname, "..", "demo", "ceilings.json"), "utf8");

describe("a catalog file with a key twice in one object", () => {
  it("is refused, naming the key, for a part's price and for a budget's value", () => {
    const demo = JSON.parse(demoText) as { endpoints: Record<string, unknown>[] };
    const first = demo.endpoints[0] ?? {};
    const withEndpoint = (endpointText: string) =>
      JSON.stringify({ ...demo, endpoints: ["__E__", ...demo.endpoints.slice(1)] }).replace('"__E__"', endpointText);
    // The price a reviewer reads is $0.0079 a unit; JSON.parse would apply 0.
    const firstText = JSON.stringify({ ...first, parts: ["__P__"] }).replace('"__P__"', '{"name":"units","price":"0.0079","price":"0"}');
    const price = parseCatalogText(withEndpoint(firstText));
    expect(price.ok).toBe(false);
    if (!price.ok) expect(price.errors.join("\n")).toContain('"price"');

    const budget = `{"key":"all","name":"All","scope":"global","window":"utc_day","value":1,"min":0,"max":1000000000,"default":1,"value":1000000000,"members":[${JSON.stringify(first.key)}]}`;
    const text = JSON.stringify({ ...demo, budgets: ["__B__"] }).replace('"__B__"', budget);
    const value = parseCatalogText(text);
    expect(value.ok).toBe(false);
    if (!value.ok) expect(value.errors.join("\n")).toContain('"value"');
  });
});
