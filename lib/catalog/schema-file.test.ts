import { readFileSync } from "node:fs";
import path from "node:path";
import Ajv2020 from "ajv/dist/2020";
import { describe, expect, it } from "vitest";
import { CATALOG_SCHEMA_FILE, CATALOG_SCHEMA_REF, catalogJsonSchema, parseCatalogText } from "@/lib/catalog";

// The catalog file's JSON Schema is a file the project ships (lib/catalog/ceilings.schema.json) and
// that `npm run ceilings -- export --out` writes beside a catalog: a relative `$schema`, never a URL
// on a domain nobody here owns. The shipped copy is the generated one, and it checks what the
// zod schema checks.

const root = path.resolve(import.meta.dirname, "../..");
const shippedPath = path.join(import.meta.dirname, CATALOG_SCHEMA_FILE);
const demoPath = path.join(root, "lib", "demo", "ceilings.json");
const generated = `${JSON.stringify(catalogJsonSchema(), null, 2)}\n`;

describe("the catalog file's JSON Schema", () => {
  it("is referenced by a relative path, and names no domain but JSON Schema's own", () => {
    expect(CATALOG_SCHEMA_REF).toBe("./ceilings.schema.json");
    const urls = [...generated.matchAll(/https?:\/\/[^"\s]+/g)].map((m) => m[0]);
    expect(urls).toEqual(["https://json-schema.org/draft/2020-12/schema"]);
    expect(catalogJsonSchema()).not.toHaveProperty("$id");
  });

  it("ships as lib/catalog/ceilings.schema.json, exactly as npm run ceilings -- schema prints it", () => {
    const shipped = readFileSync(shippedPath, "utf8");
    expect(shipped, "regenerate it: npm run -s ceilings -- schema > lib/catalog/ceilings.schema.json").toBe(generated);
  });

  it("is where the demo catalog's $schema points", () => {
    const demo = JSON.parse(readFileSync(demoPath, "utf8")) as { $schema?: string };
    expect(demo.$schema).toBeDefined();
    expect(path.resolve(path.dirname(demoPath), demo.$schema ?? "")).toBe(shippedPath);
  });

  it("accepts what the catalog parser accepts and refuses what an editor should flag", () => {
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    const validate = ajv.compile(JSON.parse(readFileSync(shippedPath, "utf8")) as object);
    const demoText = readFileSync(demoPath, "utf8");
    expect(parseCatalogText(demoText).ok).toBe(true);
    expect(validate(JSON.parse(demoText)), JSON.stringify(validate.errors)).toBe(true);
    const demo = JSON.parse(demoText) as { endpoints: Record<string, unknown>[] };
    const first = demo.endpoints[0] ?? {};
    const ceilings = first.ceilings as Record<string, unknown>[];
    const budget = { key: "all", name: "All", scope: "global", window: "utc_day", value: 1, min: 0, max: 1, default: 1, members: [first.key] };
    expect(validate({ ...demo, budgets: [budget] }), JSON.stringify(validate.errors)).toBe(true);
    expect(parseCatalogText(JSON.stringify({ ...demo, budgets: [budget] })).ok).toBe(true);
    const bad: [string, unknown][] = [
      ["an unknown field", { ...demo, extra: 1 }],
      ["another version", { ...demo, version: 2 }],
      ["an unknown metric", { ...demo, endpoints: [{ ...first, ceilings: [{ ...ceilings[0], metric: "dollars" }] }] }],
      ["a misspelt endpoint field", { ...demo, endpoints: [{ ...first, unit_price: 1 }] }],
      ["a budget of an unknown window", { ...demo, budgets: [{ ...budget, window: "first_hit" }] }],
      ["a budget with no members", { ...demo, budgets: [{ ...budget, members: [] }] }],
      ["a price as a JSON number", { ...demo, endpoints: [{ ...first, parts: [{ name: "units", price: 0.0079 }] }] }],
      ["a price of 1e9", { ...demo, endpoints: [{ ...first, parts: [{ name: "units", price: "1e9" }] }] }],
      ["a price finer than a pico", { ...demo, endpoints: [{ ...first, parts: [{ name: "units", price: "0.0000000000001" }] }] }],
      ["a part name in upper case", { ...demo, endpoints: [{ ...first, parts: [{ name: "Input", price: "1" }] }] }],
      ["no parts", { ...demo, endpoints: [{ ...first, parts: [] }] }],
    ];
    for (const [what, file] of bad) {
      expect([what, validate(file)]).toEqual([what, false]);
      expect([what, parseCatalogText(JSON.stringify(file)).ok]).toEqual([what, false]);
    }
  });
});
