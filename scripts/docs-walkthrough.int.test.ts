import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { skipWithoutDatabase } from "@/db/testing";
import { runWalkthroughs, WALKTHROUGH_PAGES, walkthroughBlocks } from "./docs-walkthrough";

// The documentation's walkthroughs, followed on a fresh database as a newcomer would: every
// command of a `walkthrough` block runs, and every `# → text` line must be in its output.

const root = path.resolve(import.meta.dirname, "..");
const docs = readdirSync(path.join(root, "docs"))
  .filter((f) => f.endsWith(".md"))
  .map((f) => `docs/${f}`);

describe("walkthrough blocks", () => {
  it("are read from fenced blocks marked walkthrough, with the output each must show", () => {
    const page = ["text", "```sh walkthrough", "echo hi", "# → hi", "```", "```sh", "not run", "```", "```json walkthrough file=a.json", "{}", "```"].join(
      "\n",
    );
    expect(walkthroughBlocks(page, "p.md")).toEqual([
      { page: "p.md", line: 2, lang: "sh", file: undefined, code: "echo hi\n# → hi", expects: ["hi"] },
      { page: "p.md", line: 9, lang: "json", file: "a.json", code: "{}", expects: [] },
    ]);
  });

  it("are only on the pages the walkthrough follows, and each of those pages checks its output", () => {
    const withBlocks = docs.filter((p) => walkthroughBlocks(readFileSync(path.join(root, p), "utf8"), p).length > 0);
    expect(withBlocks.sort()).toEqual([...WALKTHROUGH_PAGES].sort());
    for (const p of WALKTHROUGH_PAGES) {
      const blocks = walkthroughBlocks(readFileSync(path.join(root, p), "utf8"), p);
      expect(blocks.filter((b) => b.expects.length > 0).length, p).toBeGreaterThanOrEqual(3);
    }
  });
});

describe.skipIf(skipWithoutDatabase())("the documentation's walkthroughs on a fresh database", () => {
  it("run from the first migration to calls in TypeScript, SQL, HTTP and Python, every output as documented", async () => {
    const lines: string[] = [];
    const { runs } = await runWalkthroughs({ log: (line) => lines.push(line) });
    const failures = runs.filter((r) => r.failure).map((r) => r.failure);
    expect(failures).toEqual([]);
    expect(runs.map((r) => r.page)).toEqual([...WALKTHROUGH_PAGES]);
  }, 300_000);
});
