import { InputError } from "@/lib/errors";
import { mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { and, eq } from "drizzle-orm";
import { afterEach, describe, expect, it, vi } from "vitest";
import { accounts, auditEvents, plans } from "@/db/schema";
import { skipWithoutDatabase } from "@/db/testing";
import { useTestDatabase } from "@/db/testing-suite";

import { staffMember } from "@/lib/changes/test-fixtures";
import { createStaffToken } from "@/lib/staff-tokens";
import { AccountRowsError, AccountsUsageError, describeAccountError, runAccounts } from "./ceilings-accounts";

// `npm run ceilings -- accounts ...` on real Postgres, through the same function the CLI calls:
// audited as the command line (actor type cli), a bulk file all or nothing with each refused row
// named by its line, and block/unblock needing a reason.

describe.skipIf(skipWithoutDatabase())("ceilings accounts", () => {
  const t = useTestDatabase("cli_accounts");
  const actor = { type: "cli", name: "ops-laptop" } as const;
  const dir = mkdtempSync(path.join(os.tmpdir(), "ceilings-accounts-"));
  const printed: string[] = [];
  /** token: the asker's personal token (CEILINGS_STAFF_TOKEN), the one proof a raise is asked with. */
  const run = async (args: string[], reason?: string, token?: string) => {
    const log = vi.spyOn(console, "log").mockImplementation((line: string) => void printed.push(line));
    try {
      await runAccounts(t.db, args, { actor, reason, ...(token ? { who: { token } } : {}) });
    } finally {
      log.mockRestore();
    }
  };
  const file = (name: string, text: string) => {
    const full = path.join(dir, name);
    writeFileSync(full, text);
    return full;
  };
  afterEach(() => {
    printed.length = 0;
  });

  it("assigns, bulk-assigns from CSV and JSON, shows, blocks and unblocks, audited as the command line", async () => {
    await t.db.insert(plans).values([
      { key: "free", name: "Free" },
      { key: "pro", name: "Pro" },
    ]);
    await run(["assign", "acct_1", "pro"], "upgrade by phone");
    expect(printed).toEqual(["acct_1: default (the default, unassigned) → pro"]);
    const [event] = await t.db
      .select()
      .from(auditEvents)
      .where(and(eq(auditEvents.action, "account.plan"), eq(auditEvents.target, "acct_1")));
    expect(event).toMatchObject({ actorType: "cli", actor: "ops-laptop", reason: "upgrade by phone" });

    await run(["bulk", file("up.csv", 'account,plan\nacct_1,pro\n"acct,2",free\n')]);
    await run(["bulk", file("up.json", JSON.stringify([{ account: "acct_3", plan: "free" }]))]);
    expect(printed.slice(1).map((l) => l.replace(/\(batch .*\)/, ""))).toEqual([
      "assigned 1 account(s), 1 already on their plan ",
      "assigned 1 account(s), 0 already on their plan ",
    ]);
    expect((await t.db.select().from(accounts)).map((a) => a.account).sort()).toEqual(["acct,2", "acct_1", "acct_3"]);

    await run(["block", "acct_3"], "fraud");
    printed.length = 0;
    await run(["show", "acct_3"]);
    expect(printed).toEqual([
      "acct_3",
      expect.stringMatching(/^ {2}plan free \(Free\), set .* by ops-laptop$/),
      expect.stringMatching(/^ {2}BLOCKED since .* by ops-laptop: fraud$/),
    ]);
    // An unblock is a raise: refused alone, asked for with the asker's token (a second admin applies it: lib/changes/plan-paths.int.test.ts).
    await expect(run(["unblock", "acct_3"], "cleared")).rejects.toMatchObject({
      code: "approval_required",
      message: expect.stringContaining("CEILINGS_STAFF_TOKEN"),
    });
    const admin = await staffMember(t.db, "admin", "cli");
    printed.length = 0;
    await run(["unblock", "acct_3"], "cleared", (await createStaffToken(t.db, { staffId: admin.staffId, name: "laptop" })).secret);
    expect(printed[0]).toMatch(/^asked for approval: request #\d+ unblock account acct_3/);
    const kinds = (await t.db.select({ action: auditEvents.action }).from(auditEvents).where(eq(auditEvents.target, "acct_3"))).map((e) => e.action);
    expect(kinds).toEqual(["account.plan", "account.block"]);
  });

  it("refuses a bulk file with a bad row, naming its line; nothing is assigned", async () => {
    const before = await t.db.select().from(accounts);
    const error = await run(["bulk", file("bad.csv", "account,plan\nacct_9,pro\nacct_10,gold\nacct_11,free\n")]).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AccountRowsError);
    const rows = error as AccountRowsError;
    expect(describeAccountError(rows.error, rows.lines).slice(1)).toEqual(["  row 1 (line 3) \"acct_10\": unknown plan 'gold'"]);
    expect(await t.db.select().from(accounts)).toEqual(before);
  });

  it("refuses a block or unblock without a reason and a wrong number of arguments as usage errors", async () => {
    await expect(run(["block", "acct_1"])).rejects.toBeInstanceOf(AccountsUsageError);
    await expect(run(["unblock", "acct_1"])).rejects.toBeInstanceOf(AccountsUsageError);
    await expect(run(["assign", "acct_1"])).rejects.toBeInstanceOf(AccountsUsageError);
    await expect(run(["nope"])).rejects.toBeInstanceOf(AccountsUsageError);
    await expect(run(["assign", "acct\u0001", "pro"])).rejects.toBeInstanceOf(InputError);
  });
});
