import { describe, expect, it } from "vitest";
import { ChangesUsageError, lasting, parseChangesArgs, parseDuration, parseUntil } from "./ceilings-changes";

// The request commands' command line, read before the database starts: a typo costs nothing.

describe("ceilings requests | approve | reject | cancel | acknowledge: the command line", () => {
  const env = { CEILINGS_STAFF_TOKEN: "cst_abcdefgh_0123456789012345678901234567890123456789012" };
  const token = env.CEILINGS_STAFF_TOKEN;

  it("reads each verb with its id, the personal token from the environment and --as", () => {
    expect(parseChangesArgs(["requests"], {})).toEqual({ verb: "requests", state: "pending", json: false });
    expect(parseChangesArgs(["requests", "--state", "all", "--json"], {})).toEqual({ verb: "requests", state: "all", json: true });
    expect(parseChangesArgs(["approve", "#12", "--note", "ok"], env)).toEqual({ verb: "approve", id: 12, who: { token }, note: "ok" });
    expect(parseChangesArgs(["approve", "#12", "--as", "a@example.com"], env)).toEqual({ verb: "approve", id: 12, who: { token, as: "a@example.com" } });
    expect(parseChangesArgs(["reject", "12", "--reason", "not now"], env)).toEqual({ verb: "reject", id: 12, reason: "not now", who: { token } });
    expect(parseChangesArgs(["acknowledge", "7"], env)).toEqual({ verb: "acknowledge", id: 7, who: { token } });
    expect(parseChangesArgs(["cancel", "3", "--as", "a@example.com"], env)).toEqual({ verb: "cancel", id: 3, who: { token, as: "a@example.com" } });
  });

  it("refuses approve, reject, cancel and acknowledge with --as alone (a name is not a proof), saying how to get a token", () => {
    for (const argv of [
      ["approve", "12", "--as", "a@example.com"],
      ["reject", "12", "--reason", "no", "--as", "a@example.com"],
      ["cancel", "12", "--as", "a@example.com"],
      ["acknowledge", "12", "--as", "a@example.com"],
      ["approve", "12"],
      ["cancel", "12"],
    ]) {
      expect(() => parseChangesArgs(argv, {}), argv.join(" ")).toThrow(
        /needs your own credential, not a name: --as alone is refused.*Personal tokens \(\/tokens\).*CEILINGS_STAFF_TOKEN/,
      );
      expect(() => parseChangesArgs(argv, { CEILINGS_STAFF_TOKEN: "  " }), argv.join(" ")).toThrow(ChangesUsageError);
    }
  });

  it("refuses a bad id, a reject without a reason and stray options", () => {
    for (const argv of [
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
      expect(() => parseChangesArgs(argv, env), argv.join(" ")).toThrow(ChangesUsageError);
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
