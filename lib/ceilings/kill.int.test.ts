import { describe, expect, it } from "vitest";
import { skipWithoutDatabase } from "@/db/testing";
import { useTestDatabase } from "@/db/testing-suite";
import { reserve } from "@/lib/enforcement";
import { adjustCeiling } from "./adjust";
import { getKillState } from "./detail";
import { killAll, killEndpoint, restoreEndpoint } from "./kill";
import { removeOverride, setOverride } from "./overrides";
import { setupControl } from "@/lib/control/context";

const control = setupControl("test");
import { auditOf, createEndpoint, first, readCeiling } from "./test-fixtures";

const operator = { type: "staff", email: "operator@test.local" } as const;
const cli = { type: "cli", name: "oncall" } as const;

describe.skipIf(skipWithoutDatabase())("kill switch and overrides", () => {
  const t = useTestDatabase("ceilings_kill");

  it("kills every ceiling of an endpoint, remembering each value, and restore puts them back", async () => {
    const { key, ceilings } = await createEndpoint(t.db);
    const changes = await killEndpoint(t.db, { endpointKey: key, actor: operator, reason: "runaway loop" });
    expect(changes.map((c) => [c.previous, c.applied])).toEqual([
      [100, 0],
      [3000, 0],
    ]);
    for (const c of ceilings) {
      expect(await readCeiling(t.db, c.id)).toMatchObject({ value: 0, valueBeforeKill: c.value, killedBy: "operator@test.local" });
      expect(first(await auditOf(t.db, c.id))).toMatchObject({ action: "ceiling.kill", previousValue: c.value, appliedValue: 0, reason: "runaway loop" });
    }
    await expect(killEndpoint(t.db, { endpointKey: key, actor: operator, reason: "again" })).rejects.toMatchObject({ code: "already_killed" });
    // Killing twice must not overwrite the remembered value with 0.
    expect(await readCeiling(t.db, first(ceilings).id)).toMatchObject({ valueBeforeKill: 100 });

    await restoreEndpoint(t.db, { endpointKey: key, actor: operator });
    for (const c of ceilings) {
      expect(await readCeiling(t.db, c.id)).toMatchObject({ value: c.value, valueBeforeKill: null, killedAt: null, killedBy: null });
    }
    await expect(restoreEndpoint(t.db, { endpointKey: key, actor: operator })).rejects.toMatchObject({ code: "not_killed" });
  });

  it("kills even when the minimum bound is above zero", async () => {
    const { key, ceilings } = await createEndpoint(t.db);
    expect(first(ceilings).minValue).toBe(10);
    await killEndpoint(t.db, { endpointKey: key, actor: operator, reason: "bill spike" });
    expect(await readCeiling(t.db, first(ceilings).id)).toMatchObject({ value: 0 });
  });

  it("keeps the remembered value when one ceiling was already killed by typing 0", async () => {
    const { key, ceilings } = await createEndpoint(t.db);
    const c = first(ceilings);
    await adjustCeiling(t.db, { ceilingId: c.id, input: "0", expectedVersion: c.version, actor: operator, reason: "one ceiling" });
    await killEndpoint(t.db, { endpointKey: key, actor: operator, reason: "whole endpoint" });
    await restoreEndpoint(t.db, { endpointKey: key, actor: operator });
    expect(await readCeiling(t.db, c.id)).toMatchObject({ value: 100 });
  });

  it("kill all, then each endpoint can be restored on its own", async () => {
    const a = await createEndpoint(t.db);
    const b = await createEndpoint(t.db);
    const changes = await killAll(t.db, { actor: cli, reason: "provider incident" });
    expect(changes.filter((c) => c.endpointKey === a.key || c.endpointKey === b.key)).toHaveLength(4);
    expect(first(await auditOf(t.db, first(a.ceilings).id))).toMatchObject({ actorType: "cli", actor: "oncall", action: "ceiling.kill" });

    await restoreEndpoint(t.db, { endpointKey: a.key, actor: operator, reason: "a is fine" });
    expect(await readCeiling(t.db, first(a.ceilings).id)).toMatchObject({ value: 100 });
    expect(await readCeiling(t.db, first(b.ceilings).id)).toMatchObject({ value: 0, valueBeforeKill: 100 });
    const state = await getKillState(t.db);
    expect(state.killed.map((k) => k.key)).toContain(b.key);
    expect(state.killed.map((k) => k.key)).not.toContain(a.key);
    await restoreEndpoint(t.db, { endpointKey: b.key, actor: operator });
    // Leave nothing killed for the tests below, which reserve on their own endpoints.
    for (const k of (await getKillState(t.db)).killed) await restoreEndpoint(t.db, { endpointKey: k.key, actor: operator });
  });

  it("an override of 0 blocks one account alone and is logged", async () => {
    const { key, ceilings } = await createEndpoint(t.db, {
      ceilings: [{ metric: "units", scope: "caller", window: "utc_day", value: 5, defaultValue: 5, minValue: 1, maxValue: 20 }],
    });
    const c = first(ceilings);
    await setOverride(t.db, { ceilingId: c.id, caller: "acct_spammer", input: "0", actor: operator, reason: "abuse" });
    expect(first(await auditOf(t.db, c.id))).toMatchObject({ action: "override.set", target: "acct_spammer", appliedValue: 0, rawInput: "0" });

    const blocked = await reserve(t.db, { endpoint: key, amount: 1, caller: "acct_spammer" });
    expect(blocked).toMatchObject({ status: "refused", gate: "ceiling" });
    const other = await reserve(t.db, { endpoint: key, amount: 1, caller: "acct_good" });
    expect(other.status).toBe("granted");

    // Above what binds the account, and the block lifted: raises (lib/changes/plan-paths.int.test.ts); built here as setup.
    const clamped = await setOverride(t.db, { ceilingId: c.id, caller: "acct_big", input: "500", actor: operator, reason: "vip", changeControl: control });
    expect(clamped).toMatchObject({ applied: 20, clamped: "max" });
    await removeOverride(t.db, { ceilingId: c.id, caller: "acct_spammer", actor: operator, reason: "appeal", changeControl: control });
    expect((await reserve(t.db, { endpoint: key, amount: 1, caller: "acct_spammer" })).status).toBe("granted");
  });

  it.each(["1e9", "500abc", "-5", ""])("refuses an override typed %j, saves nothing, and audits the attempt as ceiling.rejected", async (input) => {
    const { ceilings } = await createEndpoint(t.db, {
      ceilings: [{ metric: "units", scope: "caller", window: "utc_day", value: 5, defaultValue: 5, minValue: 1, maxValue: 20 }],
    });
    const c = first(ceilings);
    await expect(setOverride(t.db, { ceilingId: c.id, caller: "acct_typo", input, actor: operator, reason: "vip" })).rejects.toMatchObject({
      code: "invalid_input",
    });
    expect(first(await auditOf(t.db, c.id))).toMatchObject({
      action: "ceiling.rejected",
      rawInput: input,
      appliedValue: null,
      details: expect.objectContaining({ caller: "acct_typo", override: true }),
    });
  });

  it("refuses overrides on a global ceiling", async () => {
    const { ceilings } = await createEndpoint(t.db);
    await expect(setOverride(t.db, { ceilingId: first(ceilings).id, caller: "acct", input: "0", actor: operator, reason: "x" })).rejects.toMatchObject({
      code: "not_per_caller",
    });
  });

  it("the next reserve after a kill is refused by the kill switch, and the restore lets calls through", async () => {
    const { key } = await createEndpoint(t.db);
    expect((await reserve(t.db, { endpoint: key, amount: 1 })).status).toBe("granted");
    await killEndpoint(t.db, { endpointKey: key, actor: operator, reason: "stop now" });
    expect(await reserve(t.db, { endpoint: key, amount: 1 })).toMatchObject({ status: "refused", gate: "kill_switch" });
    const state = await getKillState(t.db);
    expect(state.lastKillRefusal).toMatchObject({ endpointKey: key });
    await restoreEndpoint(t.db, { endpointKey: key, actor: operator });
    expect((await reserve(t.db, { endpoint: key, amount: 1 })).status).toBe("granted");
  });

  it("kills and kills all without a reason (audited as none), while raising a value still needs one", async () => {
    const { key, ceilings } = await createEndpoint(t.db);
    await killEndpoint(t.db, { endpointKey: key, actor: operator });
    for (const c of ceilings) expect(first(await auditOf(t.db, c.id))).toMatchObject({ action: "ceiling.kill", reason: null });
    await restoreEndpoint(t.db, { endpointKey: key, actor: operator, reason: "   " });
    expect((await killAll(t.db, { actor: operator, reason: "" })).length).toBeGreaterThan(0);
    expect((await auditOf(t.db, first(ceilings).id)).at(-1)).toMatchObject({ action: "ceiling.kill", reason: null, details: { via: "all" } });
    const c = await readCeiling(t.db, first(ceilings).id);
    await expect(adjustCeiling(t.db, { ceilingId: c.id, input: "120", expectedVersion: c.version, actor: operator, reason: " " })).rejects.toMatchObject({
      code: "reason_required",
    });
  });
});
