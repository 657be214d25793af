import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import * as client from "./index";

// The package's README is all a service's developer reads: every error class the package exports
// must be named there, with its status.

const readme = readFileSync(path.join(import.meta.dirname, "README.md"), "utf8");

const errorClasses = Object.entries(client).filter(
  ([, value]) => typeof value === "function" && (value === client.CeilingsError || value.prototype instanceof client.CeilingsError),
);

describe("the client package's README", () => {
  it("names every exported error class", () => {
    expect(errorClasses.length).toBeGreaterThanOrEqual(8);
    expect(errorClasses.map(([name]) => name).filter((name) => !readme.includes(`\`${name}\``))).toEqual([]);
  });

  it("gives each typed error the status the client throws it for", () => {
    for (const status of [400, 401, 403, 404, 409, 410, 413]) {
      const error = client.errorFor(status, { error: { code: "x", message: "m" } });
      expect(readme, `${error.name} ${status}`).toMatch(new RegExp(`\`${error.name}\` (\\(.*\\) )?${status}`));
    }
  });

  it("says why a replay's remaining is empty", () => {
    expect(readme).toMatch(/## Replays[\s\S]*`remaining` is an empty list/);
  });
});
