import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { createConfig, lintFromString } from "@redocly/openapi-core";
import openapiTS, { astToString } from "openapi-typescript";
import { describe, expect, it } from "vitest";
import { openApiDocument } from "./openapi";

// The document as a client generator reads it: openapi-typescript types every request body
// exactly (a misspelt field, or neither amount nor parts, is a compile error in the client), and
// Redocly's recommended rules find nothing, not even a warning.

const ROOT = path.resolve(import.meta.dirname, "../..");

describe("the OpenAPI document for client generators", () => {
  it("types request bodies exactly with openapi-typescript: a misspelt field does not compile", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "ceilings-openapi-ts-"));
    try {
      writeFileSync(path.join(dir, "api.d.ts"), astToString(await openapiTS(openApiDocument() as never)));
      writeFileSync(
        path.join(dir, "client.ts"),
        [
          'import type { components } from "./api";',
          'type Reserve = components["schemas"]["ReserveBody"];',
          'type Settle = components["schemas"]["SettleBody"];',
          'export const byAmount: Reserve = { endpoint: "llm.chat", amount: 800, idempotencyKey: "order-7" };',
          'export const byParts: Reserve = { endpoint: "llm.gpt-4o", parts: { input: 1200, output: 800 }, caller: "acct_42" };',
          "export const settled: Settle = { actual: 3 };",
          "// @ts-expect-error a misspelt field",
          'export const misspelt: Reserve = { endpoint: "llm.chat", amount: 800, idempotency_key: "order-7" };',
          "// @ts-expect-error neither amount nor parts",
          'export const neither: Reserve = { endpoint: "llm.chat" };',
          "// @ts-expect-error an amount as a string",
          'export const text: Reserve = { endpoint: "llm.chat", amount: "800" };',
          "// @ts-expect-error a settle of nothing",
          "export const nothing: Settle = {};",
        ].join("\n"),
      );
      const tsc = path.join(ROOT, "node_modules", "typescript", "bin", "tsc");
      const run = () =>
        execFileSync(
          process.execPath,
          [tsc, "--noEmit", "--strict", "--target", "es2022", "--module", "nodenext", "--moduleResolution", "nodenext", "client.ts"],
          { cwd: dir, encoding: "utf8", stdio: "pipe" },
        );
      expect(run).not.toThrow();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);

  it("passes Redocly's recommended rules with no error and no warning", async () => {
    const config = await createConfig({ extends: ["recommended"] });
    const problems = await lintFromString({
      source: JSON.stringify(openApiDocument("https://ceilings-api.internal:3001")),
      absoluteRef: "openapi.json",
      config,
    });
    expect(problems.map((p) => `${p.severity} ${p.ruleId}: ${p.message} at ${p.location[0]?.pointer ?? ""}`)).toEqual([]);
  }, 60_000);
});
