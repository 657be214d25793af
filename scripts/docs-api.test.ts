import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { openApiDocument } from "@/lib/http";
import { API_ERROR_CODES } from "@/lib/http/openapi-schemas";
import { API_REFERENCE_PATH, ERROR_PAGES_DIR, generatedApiReference, generatedErrorPages, renderApiReference } from "./docs-api";
import { anchorsOf, githubSlug } from "./docs-links";

// docs/http-api.md is generated from the OpenAPI document: a change to the API that is not
// regenerated into the page (npm run docs:api) fails here, so the reference cannot drift.

const root = path.resolve(import.meta.dirname, "..");
type Doc = { paths: Record<string, Record<string, { responses: Record<string, unknown> }>>; components: { schemas: Record<string, unknown> } };

describe("the HTTP API reference (docs/http-api.md)", () => {
  it("is exactly what npm run docs:api generates from the OpenAPI document", () => {
    const committed = readFileSync(path.join(root, API_REFERENCE_PATH), "utf8");
    expect(committed === generatedApiReference(), `${API_REFERENCE_PATH} is out of date: run npm run docs:api and commit it`).toBe(true);
  });

  it("has a section for every operation and schema, and a row for every status of each", () => {
    const doc = openApiDocument() as unknown as Doc;
    const page = renderApiReference(doc as unknown as Record<string, unknown>);
    const anchors = anchorsOf(page);
    for (const [route, methods] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(methods)) {
        const title = `${method.toUpperCase()} ${route}`;
        expect(anchors.has(githubSlug(title)), title).toBe(true);
        const section = page.slice(page.indexOf(`### ${title}\n`));
        const table = section.slice(0, section.indexOf("\n### "));
        for (const status of Object.keys(op.responses)) expect(table, `${title} ${status}`).toMatch(new RegExp(`^\\| ${status} \\|`, "m"));
      }
    }
    for (const name of Object.keys(doc.components.schemas)) expect(anchors.has(githubSlug(name)), name).toBe(true);
  });

  it("lists every error code of the document", () => {
    const page = generatedApiReference();
    const codes = JSON.stringify(openApiDocument()).match(/"code":\s*"[a-z_]+"/g) ?? [];
    for (const c of new Set(codes.map((m) => m.replace(/^"code":\s*"|"$/g, "")))) expect(page).toContain(`| [\`${c}\`](errors/${c}.md) |`);
  });

  it("has a page per error code in docs/errors, exactly as npm run docs:api generates it, and no other", () => {
    const pages = generatedErrorPages();
    expect([...pages.keys()].sort()).toEqual(
      Object.keys(API_ERROR_CODES)
        .map((c) => `${ERROR_PAGES_DIR}/${c}.md`)
        .sort(),
    );
    const committed = readdirSync(path.join(root, ERROR_PAGES_DIR)).map((f) => `${ERROR_PAGES_DIR}/${f}`);
    expect(committed.sort()).toEqual([...pages.keys()].sort());
    for (const [file, text] of pages) expect(readFileSync(path.join(root, file), "utf8") === text, `${file} is out of date: run npm run docs:api`).toBe(true);
    // Each code in the reference's table links to its page.
    for (const c of Object.keys(API_ERROR_CODES)) expect(generatedApiReference()).toContain(`| [\`${c}\`](errors/${c}.md) |`);
  });
});
