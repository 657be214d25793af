import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { anchorsOf, brokenLinks, documentationPages, githubSlug, linksOf } from "./docs-links";

// Every relative link and #anchor of README.md, CONTRIBUTING.md and docs/*.md resolves.

describe("documentation links", () => {
  it("all resolve: the file exists and the heading is on the page", () => {
    expect(documentationPages()).toEqual(expect.arrayContaining(["README.md", "CONTRIBUTING.md", "docs/http-api.md"]));
    expect(brokenLinks()).toEqual([]);
  });

  it("make anchors as GitHub does", () => {
    expect(githubSlug("Put your own endpoint under a ceiling")).toBe("put-your-own-endpoint-under-a-ceiling");
    expect(githubSlug("TypeScript library (`lib/enforcement`)")).toBe("typescript-library-libenforcement");
    expect(githubSlug("Demo service and `npm run demo:traffic`")).toBe("demo-service-and-npm-run-demotraffic");
    expect(githubSlug("POST /api/v1/reservations/{id}/settle")).toBe("post-apiv1reservationsidsettle");
    expect(githubSlug("Throttle (soft, approximate)")).toBe("throttle-soft-approximate");
    expect([...anchorsOf("# A\n## A\n```\n# not a heading\n```\n### `npm test`\n")]).toEqual(["a", "a-1", "npm-test"]);
  });

  it("ignore links in code and find them in text, tables and images", () => {
    const page = "see [a](a.md#x) and ![i](img.png)\n| [t](t.md) |\n`[no](no.md)`\n```\n[no](no.md)\n```\n[ref]: r.md\n";
    expect(linksOf(page, "p.md").map((l) => l.target)).toEqual(["a.md#x", "img.png", "t.md", "r.md"]);
  });

  const dir = mkdtempSync(path.join(os.tmpdir(), "ceilings-links-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("report a missing file, a missing heading and a link out of the project", () => {
    mkdirSync(path.join(dir, "docs"));
    writeFileSync(path.join(dir, "README.md"), "# Top\n[ok](docs/a.md#there) [gone](docs/gone.md) [bad](docs/a.md#nowhere) [self](#top) [out](../x.md)\n");
    writeFileSync(path.join(dir, "CONTRIBUTING.md"), "[back](README.md#top)\n");
    writeFileSync(path.join(dir, "docs", "a.md"), "## There\n[up](../README.md#missing)\n");
    expect(brokenLinks(dir)).toEqual([
      "README.md:2: docs/gone.md: no such file docs/gone.md",
      "README.md:2: docs/a.md#nowhere: no heading #nowhere in docs/a.md",
      "README.md:2: ../x.md: points outside the project",
      "docs/a.md:2: ../README.md#missing: no heading #missing in README.md",
    ]);
  });
});
