import { describe, expect, it } from "vitest";
import { parsePlansArgs, PlansUsageError } from "./ceilings-plans";

describe("npm run ceilings -- plans: arguments", () => {
  it("reads each verb", () => {
    expect(parsePlansArgs([])).toEqual({ verb: "list" });
    expect(parsePlansArgs(["show", "pro"])).toEqual({ verb: "show", plan: "pro" });
    expect(parsePlansArgs(["create", "pro", "--name", "Pro", "--reason", "tiers"])).toEqual({
      verb: "create",
      plan: "pro",
      name: "Pro",
      description: "",
      reason: "tiers",
    });
    expect(parsePlansArgs(["update", "pro", "--description", "paid", "--reason", "r"])).toEqual({
      verb: "update",
      plan: "pro",
      description: "paid",
      reason: "r",
    });
    expect(parsePlansArgs(["set", "pro", "--ceiling", "email.send/units/utc_day", "100", "--reason", "r"])).toEqual({
      verb: "set",
      plan: "pro",
      target: { ceiling: { endpoint: "email.send", metric: "units", window: "utc_day" } },
      value: "100",
      reason: "r",
    });
    expect(parsePlansArgs(["set", "pro", "--budget", "llm.daily", "12.50", "--confirm", "12.50", "--reason", "r"])).toMatchObject({
      target: { budgetKey: "llm.daily" },
      value: "12.50",
      confirm: "12.50",
    });
    expect(parsePlansArgs(["set", "pro", "--ceiling", "12", "0", "--reason", "r"])).toMatchObject({ target: { ceilingId: 12 }, value: "0" });
    expect(parsePlansArgs(["unset", "pro", "--budget", "llm.daily", "--reason", "r"])).toEqual({
      verb: "unset",
      plan: "pro",
      target: { budgetKey: "llm.daily" },
      reason: "r",
    });
    expect(parsePlansArgs(["default", "free", "--reason", "r"])).toEqual({ verb: "default", plan: "free", reason: "r" });
    expect(parsePlansArgs(["delete", "old", "--reason", "r"])).toEqual({ verb: "delete", plan: "old", reason: "r" });
  });

  it.each([
    [["create", "pro", "--name", "Pro"], 'needs --reason "why"'],
    [["create", "pro", "--reason", "r"], "needs --name"],
    [["set", "pro", "100", "--reason", "r"], "say where: --ceiling"],
    [["set", "pro", "--ceiling", "email.send/units", "100", "--reason", "r"], "--ceiling must be <endpoint>/<metric>/<window>"],
    [["set", "pro", "--ceiling", "12", "--budget", "b", "1", "--reason", "r"], "not both"],
    [["set", "pro", "--ceiling", "12", "--reason", "r"], "needs a value"],
    [["set", "pro", "--ceiling", "12", "1", "2", "--reason", "r"], "unexpected arguments: 2"],
    [["default", "--reason", "r"], "needs a plan"],
    [["delete", "pro", "--name", "x", "--reason", "r"], "takes no --name"],
    [["show", "pro", "--colour", "red"], "Unknown option '--colour'"],
    [["rename", "pro"], "unknown plans command 'rename'"],
  ])("refuses %j: %s", (argv, message) => {
    expect(() => parsePlansArgs(argv)).toThrow(PlansUsageError);
    expect(() => parsePlansArgs(argv)).toThrow(message);
  });

  it("asks for a raise only with the personal token: a bare --as (a name anyone could type) is refused, --as with the token is kept for cliStaff to match", () => {
    const argv = ["set", "free", "--ceiling", "llm/units/utc_day", "40", "--reason", "x", "--as", "bob@example.com"];
    expect(() => parsePlansArgs(argv, {})).toThrow(
      /plans set \(asking for a raise\) needs your own credential, not a name: --as alone is refused.*\/tokens.*CEILINGS_STAFF_TOKEN/,
    );
    for (const verb of [
      ["default", "free"],
      ["key-assignable", "free", "--on"],
      ["unset", "free", "--budget", "b"],
    ]) {
      expect(() => parsePlansArgs([...verb, "--reason", "x", "--as", "bob@example.com"], {}), verb.join(" ")).toThrow(/--as alone is refused/);
    }
    const token = "cst_abcdefgh_0123456789012345678901234567890123456789012";
    expect(parsePlansArgs(argv, { CEILINGS_STAFF_TOKEN: token })).toMatchObject({ verb: "set", who: { token, as: "bob@example.com" } });
    expect(parsePlansArgs(argv.slice(0, -2), { CEILINGS_STAFF_TOKEN: token })).toMatchObject({ verb: "set", who: { token } });
  });
});
