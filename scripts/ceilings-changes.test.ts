import { describe, expect, it } from "vitest";
import { ChangesUsageError, lasting, parseChangesArgs, parseDuration, parseUntil } from "./ceilings-changes";

// The request commands' command line, read before the database starts: a typo costs nothing.

describe("ceilings requests | approve | reject | cancel | acknowledge: the command line", () => {
  it("reads each verb with its id and --as", () => {
    expect(parseChangesArgs(["requests"])).toEqual({ verb: "requests", state: "pending", json: false });
    expect(parseChangesArgs(["requests", "--state", "all", "--json"])).toEqual({ verb: "requests", state: "all", json: true });
    expect(parseChangesArgs(["approve", "#12", "--as", "a@example.com", "--note", "ok"])).toEqual({ verb: "approve", id: 12, as: "a@example.com", note: "ok" });
    expect(parseChangesArgs(["reject", "12", "--reason", "not now", "--as", "a@example.com"])).toEqual({ verb: "reject", id: 12, reason: "not now", as: "a@example.com" });
    expect(parseChangesArgs(["cancel", "3", "--as", "a@example.com"])).toEqual({ verb: "cancel", id: 3, as: "a@example.com" });
  });

  it("refuses a missing --as, a bad id, a reject without a reason and stray options", () => {
    for (const argv of [
      ["approve", "12"],
      ["approve", "twelve", "--as", "a@example.com"],
      ["approve", "0", "--as", "a@example.com"],
      ["approve", "99999999999", "--as", "a@example.com"],
      ["reject", "12", "--as", "a@example.com"],
      ["requests", "--state", "done"],
      ["requests", "12"],
      ["approve", "12", "--as", "a@example.com", "--json"],
      ["approve", "12", "13", "--as", "a@example.com"],
      ["approve", "12", "--as"],
      ["approve", "12", "--as", "a@example.com", "--force"],
      ["approve", "--help"],
    ]) {
      expect(() => parseChangesArgs(argv), argv.join(" ")).toThrow(ChangesUsageError);
    }
  });

  it("reads a raise's length and end", () => {
    expect(parseDuration("2h")).toBe(7200);
    expect(parseDuration("1h30m")).toBe(5400);
    expect(parseDuration("1d")).toBe(86_400);
    for (const bad of ["2", "h", "2 hours", "0m", "-1h", "2h and more"]) expect(() => parseDuration(bad), bad).toThrow(ChangesUsageError);
    expect(parseUntil("2026-12-02T18:00:00Z").toISOString()).toBe("2026-12-02T18:00:00.000Z");
    expect(parseUntil("2026-12-02T19:00:00+01:00").toISOString()).toBe("2026-12-02T18:00:00.000Z");
    // Without a zone it would be read as the machine's local time: refused.
    expect(() => parseUntil("2026-12-02T18:00:00")).toThrow(ChangesUsageError);
    // A date that does not exist would roll over to another day: refused, not guessed.
    expect(() => parseUntil("2027-02-30T10:00:00Z")).toThrow(/--until is not a time/);
    expect(() => parseUntil("2026-12-31T24:00:00Z")).toThrow(/--until is not a time/);
    expect(() => parseUntil("2026-12-02T18:60:00+01:00")).toThrow(/--until is not a time/);
    expect(lasting(5400)).toBe("1h30m");
  });
});
