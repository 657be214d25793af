import { describe, expect, it } from "vitest";
import { lineageText } from "./staff-lineage";

// The Staff page's line under each member: who gave them control, so an admin sees who is independent of whom.

describe("lineageText", () => {
  it("names each grant in order, and says when nobody on the staff made it", () => {
    expect(lineageText([{ kind: "create", by: "ops", parent: false }])).toBe("created by ops (no parent)");
    expect(
      lineageText([
        { kind: "create", by: "ada@x", parent: true },
        { kind: "promote", by: "bea@x", parent: true },
        { kind: "password", by: "ada@x", parent: true },
      ]),
    ).toBe("created by ada@x; promoted by bea@x; password set by ada@x");
    expect(lineageText(undefined)).toContain("no record");
  });
});
