import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

// `npm install` warns (EBADENGINE) for every installed package whose `engines.node` the running Node
// does not satisfy. The project's floor (package.json `engines`, which the README states) must
// satisfy every package the lock file installs everywhere, so a supported Node installs without a
// warning. Optional packages (one platform's binary each) are left out: npm skips them elsewhere.

const root = path.resolve(import.meta.dirname, "..");
const readJson = (file: string): unknown => JSON.parse(readFileSync(path.join(root, file), "utf8"));

type Version = [number, number, number];

function parseVersion(text: string): { v: Version; parts: number } {
  const pieces = text
    .replace(/^v/, "")
    .split(".")
    .filter((p) => p !== "" && p !== "x" && p !== "*");
  const n = pieces.map((p) => Number.parseInt(p, 10));
  if (n.some((x) => Number.isNaN(x))) throw new Error(`cannot read version '${text}'`);
  return { v: [n[0] ?? 0, n[1] ?? 0, n[2] ?? 0], parts: n.length };
}

const cmp = (a: Version, b: Version): number => a[0] - b[0] || a[1] - b[1] || a[2] - b[2];

/** Whether `version` satisfies one comparator set of an npm range (the forms package locks use). */
function satisfiesSet(version: Version, set: string): boolean {
  const comparators = set
    .replace(/(>=|<=|>|<|=|\^|~)\s+/g, "$1")
    .trim()
    .split(/\s+/);
  return comparators.every((c) => {
    if (c === "" || c === "*" || c === "x") return true;
    const [, op = "", rest = ""] = /^(>=|<=|>|<|=|\^|~)?(.*)$/.exec(c) ?? [];
    const { v, parts } = parseVersion(rest);
    const next = (p: number): Version => (p <= 1 ? [v[0] + 1, 0, 0] : [v[0], v[1] + 1, 0]);
    switch (op) {
      case ">=":
        return cmp(version, v) >= 0;
      case ">":
        return cmp(version, v) > 0;
      case "<=":
        return cmp(version, v) <= 0;
      case "<":
        return cmp(version, v) < 0;
      case "^":
        return cmp(version, v) >= 0 && cmp(version, v[0] > 0 ? [v[0] + 1, 0, 0] : next(parts)) < 0;
      case "~":
        return cmp(version, v) >= 0 && cmp(version, next(Math.max(parts, 2))) < 0;
      default:
        // `20`, `20.9`, `=20.9.0`: that version, or any within the parts given.
        return parts === 3 ? cmp(version, v) === 0 : cmp(version, v) >= 0 && cmp(version, next(parts)) < 0;
    }
  });
}

function satisfies(version: string, range: string): boolean {
  const v = parseVersion(version).v;
  return range.split("||").some((set) => satisfiesSet(v, set));
}

const manifest = readJson("package.json") as { engines: { node: string } };
const floor = /^>=\s*(\d+\.\d+(?:\.\d+)?)$/.exec(manifest.engines.node)?.[1];

describe("the Node floor", () => {
  it("reads npm ranges as npm does", () => {
    const cases: [string, string, boolean][] = [
      ["20.19.0", "^22.17.0 || >=24.0.0", false],
      ["22.17.0", "^22.17.0 || >=24.0.0", true],
      ["20.19.0", ">=20.11.0", true],
      ["20.9.0", ">=20.11.0", false],
      ["20.19.0", "18 || 20 || >=22", true],
      ["21.0.0", "18 || 20 || >=22", false],
      ["20.19.0", "^20.19.0 || >=22.12.0", true],
      ["20.18.9", "^20.19.0 || >=22.12.0", false],
      ["20.19.0", ">= 10.x", true],
      ["20.19.0", "^10 || ^12 || ^13.7 || ^14 || >=15.0.1", true],
      ["20.19.0", "*", true],
      ["20.19.0", "~20.18.0", false],
    ];
    for (const [version, range, expected] of cases) expect([version, range, satisfies(version, range)]).toEqual([version, range, expected]);
  });

  it("is one version, stated in package.json and in the README's quick start", () => {
    expect(floor, `package.json engines.node is '${manifest.engines.node}', expected '>=X.Y'`).toBeDefined();
    const readme = readFileSync(path.join(root, "README.md"), "utf8");
    expect(readme).toContain(`Node ${floor} or later`);
  });

  it("satisfies every package npm installs, so a supported Node installs without an engine warning", () => {
    const lock = readJson("package-lock.json") as { packages: Record<string, { engines?: { node?: string }; optional?: boolean }> };
    const demanding = Object.entries(lock.packages)
      .filter(([name, p]) => name !== "" && !p.optional && p.engines?.node && !satisfies(floor ?? "0.0.0", p.engines.node))
      .map(([name, p]) => `${name.replace(/^.*node_modules\//, "")} wants node ${p.engines?.node}`);
    expect(demanding).toEqual([]);
  });
});
