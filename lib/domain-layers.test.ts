import path from "node:path";
import { ESLint } from "eslint";
import { describe, expect, it } from "vitest";

// The lint rule that keeps lib/'s domains acyclic (ceilings/domain-layers, eslint.config.mjs): a
// domain imports only the layers below its own. Linted as text at a path inside lib/, so the real
// configuration decides.

const root = path.resolve(import.meta.dirname, "..");
const eslint = new ESLint({ cwd: root });

async function layerErrors(file: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: path.join(root, file) });
  return (result?.messages ?? []).filter((m) => m.ruleId === "ceilings/domain-layers").map((m) => m.message);
}

describe("lib's domain layers", () => {
  it("refuses an import of a domain at or above the importer's layer, in every form", async () => {
    const errors = await layerErrors(
      "lib/budgets/probe.ts",
      [
        'import { listEndpointsOverview } from "@/lib/ceilings";',
        'export { parseCatalogText } from "../catalog/file";',
        'export * from "@/lib/changes";',
        'export const later = () => import("@/lib/plans/read");',
        "void listEndpointsOverview;",
      ].join("\n"),
    );
    expect(errors).toHaveLength(4);
    expect(errors[0]).toContain("lib/budgets (layer 10) may not import lib/ceilings (layer 11)");
  });

  it("allows the layers below, the domain's own modules and packages", async () => {
    const errors = await layerErrors(
      "lib/ceilings/probe.ts",
      [
        'import { clampToBounds } from "@/lib/limits/parse";',
        'import { readBudgetStops } from "@/lib/budgets/read-stops";',
        'import { lockCeiling } from "./lock";',
        'import { z } from "zod";',
        "export const used = [clampToBounds, readBudgetStops, lockCeiling, z];",
      ].join("\n"),
    );
    expect(errors).toEqual([]);
  });

  it("refuses two domains of one layer importing each other", async () => {
    expect(await layerErrors("lib/ceilings/probe.ts", 'export * from "@/lib/enforcement";')).toHaveLength(1);
  });

  it("names a domain with no layer, as importer and as imported", async () => {
    expect(await layerErrors("lib/newdomain/probe.ts", "export const a = 1;")).toEqual([expect.stringContaining("lib/newdomain has no layer")]);
    expect(await layerErrors("lib/budgets/probe.ts", 'export * from "@/lib/newdomain/probe";')).toEqual([
      expect.stringContaining("lib/newdomain has no layer"),
    ]);
  });

  it("exempts tests and fixtures, which look at a domain from outside", async () => {
    expect(await layerErrors("lib/ceilings/probe.int.test.ts", 'export * from "@/lib/catalog";')).toEqual([]);
    expect(await layerErrors("lib/ceilings/test-fixtures.ts", 'export * from "@/lib/catalog";')).toEqual([]);
  });
});
