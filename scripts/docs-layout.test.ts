import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";

// docs/development.md's layout names every folder of lib/, each at the start of its line (the
// list once missed the five largest): a folder added or renamed fails here until the page says it.

describe("docs/development.md's layout", () => {
  it("names every folder of lib/ and no folder that is not there", () => {
    const page = readFileSync("docs/development.md", "utf8");
    const block = page.slice(page.indexOf("## Layout"));
    const listed = [...block.matchAll(/^ {2}([a-z-]+(?:, [a-z-]+)*) {2,}/gm)].flatMap((m) => (m[1] ?? "").split(", "));
    const folders = readdirSync("lib", { withFileTypes: true })
      .filter((d) => d.isDirectory())
      .map((d) => d.name)
      .sort();
    expect([...listed].sort()).toEqual(folders);
  });
});
