import { describe, expect, it } from "vitest";
import { IDLE } from "@/app/_lib/action-state";
import { isActionCore } from "@/app/_lib/define-action";
import { type ActionName, runAction } from "./actions";
import * as accounts from "./accounts/account-action-core";
import * as alerts from "./alerts/alert-action-core";
import * as apiKeys from "./api-keys/api-key-action-core";
import * as budgets from "./budgets/budget-action-core";
import * as changes from "./changes/change-action-core";
import * as control from "./control-action-core";
import * as ceiling from "./endpoints/[key]/ceiling-action-core";
import * as catalog from "./endpoints/catalog-action-core";
import * as plans from "./plans/plan-action-core";
import * as sources from "./reconciliation/sources/source-action-core";
import * as providerCap from "./endpoints/[key]/provider-cap-action-core";
import * as schedules from "./endpoints/[key]/schedule-action-core";
import * as staff from "./staff/staff-action-core";
import * as tokens from "./tokens/token-action-core";
import * as whatIf from "./what-if-action-core";

describe("runAction, the dashboard's one server action", () => {
  it("refuses a name that is no action, without reading the session or the form", async () => {
    const forged: unknown[] = [
      "nope",
      "constructor",
      "__proto__",
      "ceiling.kill ",
      "ceiling.kill\u0000",
      "CEILING.KILL",
      "",
      ["ceiling.kill"],
      { toString: () => "ceiling.kill" },
      7,
      null,
    ];
    for (const name of forged) {
      expect(await runAction(name as ActionName, IDLE, new FormData())).toEqual({
        status: "error",
        error: "This action does not exist. Reload the page and try again.",
        code: "not_found",
      });
    }
  });

  it("names every action once", () => {
    const cores = [
      accounts,
      alerts,
      apiKeys,
      budgets,
      changes,
      control,
      ceiling,
      catalog,
      plans,
      providerCap,
      sources,
      schedules,
      staff,
      tokens,
      whatIf,
    ].flatMap((m) => Object.values(m).filter(isActionCore));
    const names = cores.map((c) => c.boundary);
    expect(names.length).toBe(64);
    expect(new Set(names).size).toBe(names.length);
  });
});
