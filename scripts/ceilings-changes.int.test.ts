import { execFile } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { and, eq } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { auditEvents, ceilings, changeRequests, endpoints, staff, staffTokens } from "@/db/schema";
import { skipWithoutDatabase } from "@/db/testing";
import { useTestDatabase } from "@/db/testing-suite";
import { type EndpointSpecInput, exportCatalog } from "@/lib/catalog";
import { killEndpoint } from "@/lib/ceilings";
import { requestChange } from "@/lib/changes";
import { changeStaffRole, setStaffPassword } from "@/lib/auth/staff-admin";
import { createStaffToken, revokeStaffToken } from "@/lib/staff-tokens";
import { parseChangesArgs, runChanges } from "./ceilings-changes";
import { parseApplyOptions, runApplyFile, runPlanFile } from "./ceilings-file";

// Change control from the command line on real Postgres, through the functions scripts/ceilings.ts
// calls: `plan` marks raises, `apply` makes the rest at once and turns raises into change requests
// (or break glass), and approve/reject/acknowledge act as the staff member their personal token
// (CEILINGS_STAFF_TOKEN) proves: --as alone is refused there. The second person is held by
// lib/changes and the database, whatever path asked.

const ADMIN = "ada@example.com";
const ADMIN2 = "bea@example.com";
const OPERATOR = "oli@example.com";
const VIEWER = "vic@example.com";

let n = 0;

function must<T>(value: T | undefined): T {
  if (value === undefined) throw new Error("expected a row");
  return value;
}
function endpointSpec(key: string, over: { day?: number; month?: number; perCallMax?: number; dayMax?: number } = {}): EndpointSpecInput {
  return {
    key,
    name: "One-time code SMS",
    unit: "messages",
    parts: [{ name: "units", price: "0.01" }],
    perCallMax: over.perCallMax ?? 1,
    ceilings: [
      { metric: "units", scope: "global", window: "utc_day", value: over.day ?? 100, min: 0, max: over.dayMax ?? 200, default: 100 },
      { metric: "units", scope: "global", window: "billing_month", value: over.month ?? 3000, min: 0, max: 3000, default: 3000 },
    ],
  };
}

describe.skipIf(skipWithoutDatabase())("ceilings change control (CLI)", () => {
  const t = useTestDatabase("cli_changes");
  const dir = mkdtempSync(path.join(os.tmpdir(), "ceilings-changes-"));
  /** The catalog in force (export) with one endpoint as given: every file lists every endpoint. */
  const catalogWith = async (spec: EndpointSpecInput) => {
    n += 1;
    const file = path.join(dir, `c${n}.json`);
    const current = await exportCatalog(t.db);
    writeFileSync(file, JSON.stringify({ ...current, endpoints: [...current.endpoints.filter((e) => e.key !== spec.key), spec] }));
    return file;
  };

  async function lines(run: (print: (l: string) => void) => Promise<unknown>): Promise<string[]> {
    const out: string[] = [];
    await run((l) => out.push(l));
    return out;
  }
  /** Each staff member's personal token, made as the dashboard makes it. */
  const tokens = new Map<string, string>();
  const tokenOf = (email: string) => {
    const token = tokens.get(email);
    if (!token) throw new Error(`no token for ${email}`);
    return token;
  };
  const apply = (
    file: string,
    o: { as?: string; token?: string; breakGlass?: boolean; reason?: string; endsAfterSeconds?: number; endsAt?: Date; confirmRaise?: boolean },
  ) =>
    lines((print) =>
      runApplyFile(
        t.db,
        {
          file,
          reason: o.reason ?? "file change",
          confirmRaise: o.confirmRaise ?? false,
          osUser: "ci",
          breakGlass: o.breakGlass ?? false,
          ...(o.as ? { as: o.as } : {}),
          ...(o.token ? { token: o.token } : {}),
          ...(o.endsAfterSeconds ? { endsAfterSeconds: o.endsAfterSeconds } : {}),
          ...(o.endsAt ? { endsAt: o.endsAt } : {}),
        },
        print,
      ),
    );
  /** The CLI with no credential in the environment: --as is all it has. */
  const cli = (...argv: string[]) => lines((print) => runChanges(t.db, parseChangesArgs(argv, {}), print));
  /** The CLI run by `email` with their own personal token in CEILINGS_STAFF_TOKEN. */
  const by =
    (email: string) =>
    (...argv: string[]) =>
      lines((print) => runChanges(t.db, parseChangesArgs(argv, { CEILINGS_STAFF_TOKEN: tokenOf(email) }), print));
  // endpointSpec's global units ceiling of a window: an endpoint may gain a day's calls ceiling
  // too, and without the metric the first of the two rows, in whatever order the server read them,
  // was taken.
  const unitsCeiling = async (key: string, window: "utc_day" | "billing_month") => {
    const [row] = await t.db
      .select({ c: ceilings })
      .from(ceilings)
      .innerJoin(endpoints, eq(endpoints.id, ceilings.endpointId))
      .where(and(eq(endpoints.key, key), eq(ceilings.window, window), eq(ceilings.metric, "units"), eq(ceilings.scope, "global")));
    return must(row).c;
  };
  const dayCeiling = (key: string) => unitsCeiling(key, "utc_day");
  const monthValue = async (key: string) => (await unitsCeiling(key, "billing_month")).value;
  const requestsOf = (key: string) =>
    t.db
      .select({ r: changeRequests })
      .from(changeRequests)
      .innerJoin(endpoints, eq(endpoints.id, changeRequests.endpointId))
      .where(eq(endpoints.key, key))
      .then((rows) => rows.map((x) => x.r));

  /** A new endpoint at its defaults (no raise), applied from a file by the OS user as before. */
  async function fresh(key: string): Promise<EndpointSpecInput> {
    const spec = endpointSpec(key);
    await apply(await catalogWith(spec), {});
    return spec;
  }

  beforeAll(async () => {
    await t.db.insert(staff).values([
      { email: ADMIN, role: "admin", passwordHash: "x" },
      { email: ADMIN2, role: "admin", passwordHash: "x" },
      { email: OPERATOR, role: "operator", passwordHash: "x" },
      { email: VIEWER, role: "viewer", passwordHash: "x" },
      { email: "gone@example.com", role: "admin", passwordHash: "x", disabledAt: new Date() },
    ]);
    for (const row of await t.db.select().from(staff)) {
      if (row.disabledAt === null) tokens.set(row.email, (await createStaffToken(t.db, { staffId: row.id, name: "laptop" })).secret);
    }
  });

  it("plan marks each raise 'needs approval' and counts them; a lowering is not marked", async () => {
    await fresh("cc.plan");
    const file = await catalogWith(endpointSpec("cc.plan", { day: 150, month: 2000, perCallMax: 2 }));
    const out = await lines((print) => runPlanFile(t.db, file, print));
    expect(out.filter((l) => l.includes("NEEDS APPROVAL"))).toEqual([
      "    NEEDS APPROVAL: cc.plan: per-call max 1 → 2",
      expect.stringMatching(/^ {4}NEEDS APPROVAL: cc\.plan #\d+ units\/global\/utc_day: value 100 → 150$/),
    ]);
    // The month's lowering is listed without a mark.
    const month = out.findIndex((l) => l.includes("value 3,000 → 2,000"));
    expect(month).toBeGreaterThan(-1);
    expect(out[month + 2] ?? "").not.toContain("NEEDS APPROVAL");
    expect(out.at(-1)).toMatch(/^2 change\(s\) need approval \(2 change request\(s\)\)/);
  });

  it("apply without a token refuses a file with raises: nothing of it is made, its lowering neither", async () => {
    await fresh("cc.noas");
    const file = await catalogWith(endpointSpec("cc.noas", { day: 150, month: 2000 }));
    await expect(apply(file, {})).rejects.toMatchObject({ code: "approval_required" });
    expect((await dayCeiling("cc.noas")).value).toBe(100);
    expect(await monthValue("cc.noas")).toBe(3000);
    expect(await requestsOf("cc.noas")).toEqual([]);
  });

  it("apply with an operator's token makes the lowering at once and asks for the raise; applying again asks once", async () => {
    await fresh("cc.ask");
    const file = await catalogWith(endpointSpec("cc.ask", { day: 150, month: 2000 }));
    const out = await apply(file, { token: tokenOf(OPERATOR), reason: "launch on Friday" });
    expect(await monthValue("cc.ask")).toBe(2000);
    expect((await dayCeiling("cc.ask")).value).toBe(100);
    const [request, ...more] = await requestsOf("cc.ask");
    expect(more).toEqual([]);
    expect(request).toMatchObject({ kind: "ceiling.value", state: "pending", requestedBy: OPERATOR, requestedVia: "cli", reason: "launch on Friday" });
    expect(must(request).change).toEqual({ ceilingId: (await dayCeiling("cc.ask")).id, value: 150 });
    expect(out).toContain(`asked for approval (1); approvers alerted:`);
    expect(out.some((l) => l.startsWith(`  #${must(request).id} `))).toBe(true);
    // The month was applied by the operator, named in the audit log.
    const [applied] = await t.db
      .select()
      .from(auditEvents)
      .where(and(eq(auditEvents.endpointKey, "cc.ask"), eq(auditEvents.action, "ceiling.update")));
    expect(applied).toMatchObject({ actorType: "config", actor: OPERATOR });

    const again = await apply(file, { token: tokenOf(OPERATOR) });
    expect(again.some((l) => l.includes(`#${must(request).id}`) && l.includes("already pending"))).toBe(true);
    expect(await requestsOf("cc.ask")).toHaveLength(1);
    const listed = await cli("requests");
    expect(listed.some((l) => l.startsWith(`#${must(request).id}  pending  ceiling.value`))).toBe(true);
    const json = JSON.parse((await cli("requests", "--json"))[0] ?? "") as { id: number }[];
    expect(json.map((r) => r.id)).toContain(must(request).id);

    // An operator cannot approve; the requester (by staff id) cannot either.
    await expect(by(OPERATOR)("approve", String(must(request).id))).rejects.toMatchObject({ code: expect.stringMatching(/^(forbidden|own_request)$/) });
    // A second admin approves: the value is in force, audited as the direct edit with the request.
    expect(await by(ADMIN)("approve", `#${must(request).id}`, "--note", "ok for the launch")).toEqual([
      expect.stringMatching(new RegExp(`^#${must(request).id} applied: `)),
    ]);
    expect((await dayCeiling("cc.ask")).value).toBe(150);
    const [approved] = await requestsOf("cc.ask");
    expect(approved).toMatchObject({ state: "applied", decidedBy: ADMIN, decisionNote: "ok for the launch" });
    const events = await t.db.select().from(auditEvents).where(eq(auditEvents.endpointKey, "cc.ask"));
    const raise = events.find((e) => e.actor === ADMIN && e.action.startsWith("ceiling."));
    expect(raise?.details).toMatchObject({ requestId: must(request).id, requestedBy: OPERATOR });
    // Nothing is left to change: the file is now what is in force.
    expect(await lines((print) => runPlanFile(t.db, file, print))).toEqual(["no changes: the database already matches the file"]);
  });

  it("a raise for a while and the same raise for good are different requests: applying again asks once per end", async () => {
    await fresh("cc.ends");
    const file = await catalogWith(endpointSpec("cc.ends", { day: 150 }));
    const until = new Date(Date.now() + 6 * 60 * 60 * 1000);
    const asked = async (o: { endsAfterSeconds?: number; endsAt?: Date }) =>
      (await apply(file, { token: tokenOf(OPERATOR), ...o })).some((l) => l.includes("already pending"));
    // Each end asked for the first time is a new request, not "already pending".
    expect(await asked({ endsAfterSeconds: 7200 })).toBe(false);
    expect(await asked({})).toBe(false);
    expect(await asked({ endsAfterSeconds: 3600 })).toBe(false);
    expect(await asked({ endsAt: until })).toBe(false);
    // The same change with the same end again: its twin is found, nothing new is asked.
    expect(await asked({ endsAfterSeconds: 7200 })).toBe(true);
    expect(await asked({})).toBe(true);
    expect(await asked({ endsAt: until })).toBe(true);
    const requests = await requestsOf("cc.ends");
    expect(requests.map((r) => [r.endsAfterSeconds, r.endsAt?.getTime() ?? null]).sort()).toEqual(
      [
        [3600, null],
        [7200, null],
        [null, until.getTime()],
        [null, null],
      ].sort(),
    );
    // Withdrawn, so later tests that list the operator's pending requests see only their own.
    for (const r of requests) await by(OPERATOR)("cancel", String(r.id));
  });

  it("the requester can never approve their own request: asked from the CLI or from the dashboard", async () => {
    await fresh("cc.self");
    await apply(await catalogWith(endpointSpec("cc.self", { day: 160 })), { token: tokenOf(ADMIN) });
    const [fromCli] = await requestsOf("cc.self");
    await expect(by(ADMIN)("approve", String(must(fromCli).id))).rejects.toMatchObject({ code: "own_request" });
    expect((await dayCeiling("cc.self")).value).toBe(100);
    // The refusal is logged.
    const refused = await t.db
      .select()
      .from(auditEvents)
      .where(and(eq(auditEvents.action, "change.refused"), eq(auditEvents.actor, ADMIN)));
    expect(refused.length).toBeGreaterThan(0);
    // Withdrawn by its requester (cancel), then asked in the dashboard: still refused from the CLI.
    expect(await by(ADMIN)("cancel", String(must(fromCli).id))).toEqual([expect.stringMatching(new RegExp(`^#${must(fromCli).id} cancelled: `))]);
    const [adaRow] = await t.db.select().from(staff).where(eq(staff.email, ADMIN));
    const ada = { staffId: must(adaRow).id, email: ADMIN, role: "admin" as const, via: "dashboard" as const };
    const fromDashboard = await requestChange(t.db, {
      kind: "ceiling.value",
      change: { ceilingId: (await dayCeiling("cc.self")).id, value: 170 },
      requester: ada,
      reason: "asked in the dashboard",
    });
    await expect(by(ADMIN)("approve", String(fromDashboard.id))).rejects.toMatchObject({ code: "own_request" });
    await expect(by(ADMIN)("reject", String(fromDashboard.id), "--reason", "mine")).rejects.toMatchObject({ code: "own_request" });
    expect((await dayCeiling("cc.self")).value).toBe(100);
    // Another admin rejects it: nothing is raised.
    expect(await by(ADMIN2)("reject", String(fromDashboard.id), "--reason", "not this week")).toEqual([
      expect.stringMatching(new RegExp(`^#${fromDashboard.id} rejected: `)),
    ]);
    const rejected = (await requestsOf("cc.self")).find((r) => r.id === fromDashboard.id);
    expect(rejected).toMatchObject({ state: "rejected", decidedBy: ADMIN2, decisionNote: "not this week" });
    expect((await dayCeiling("cc.self")).value).toBe(100);
  });

  it("an unknown, an expired or a decided request is refused with a clear error; nothing changes", async () => {
    await fresh("cc.expired");
    await apply(await catalogWith(endpointSpec("cc.expired", { day: 180 })), { token: tokenOf(OPERATOR) });
    const [request] = await requestsOf("cc.expired");
    await expect(by(ADMIN)("approve", "999999")).rejects.toMatchObject({ code: "not_found" });
    // 24 h later: expired (the worker marks it; an approval before the worker ran is refused too).
    await t.ownerDb
      .update(changeRequests)
      .set({ requestedAt: new Date(Date.now() - 25 * 3600_000), expiresAt: new Date(Date.now() - 3600_000) })
      .where(eq(changeRequests.id, must(request).id));
    await expect(by(ADMIN)("approve", String(must(request).id))).rejects.toMatchObject({ code: "expired", message: expect.stringContaining("expired") });
    expect((await dayCeiling("cc.expired")).value).toBe(100);
    await expect(by(ADMIN)("approve", "x12")).rejects.toThrow(/request id/);
    await expect(cli("approve", "12")).rejects.toThrow(/CEILINGS_STAFF_TOKEN/);
    await expect(by(ADMIN)("reject", "12")).rejects.toThrow(/--reason/);
    await expect(cli("approve", "12", "--as", "nobody@example.com")).rejects.toThrow(/--as alone is refused/);
    await expect(cli("approve", "12", "--as", "gone@example.com")).rejects.toThrow(/--as alone is refused/);
  });

  it("a viewer cannot ask: the whole file is refused, its lowering too, and the refusal is logged", async () => {
    await fresh("cc.viewer");
    await expect(apply(await catalogWith(endpointSpec("cc.viewer", { day: 150, month: 2000 })), { token: tokenOf(VIEWER) })).rejects.toMatchObject({
      code: "forbidden",
    });
    expect(await monthValue("cc.viewer")).toBe(3000);
    expect((await dayCeiling("cc.viewer")).value).toBe(100);
    expect(await requestsOf("cc.viewer")).toEqual([]);
    const refused = await t.db
      .select()
      .from(auditEvents)
      .where(and(eq(auditEvents.action, "change.refused"), eq(auditEvents.actor, VIEWER)));
    expect(refused).toHaveLength(1);
  });

  it("--break-glass: needs --reason and the admin's own token (--as alone is refused); an operator may not; an admin applies at once, another acknowledges", async () => {
    const env = { CEILINGS_STAFF_TOKEN: tokenOf(ADMIN) };
    expect(() => parseApplyOptions({ "break-glass": true, as: ADMIN }, env)).toThrow(/--break-glass needs --reason/);
    expect(() => parseApplyOptions({ "break-glass": true, reason: "the launch is now", as: ADMIN }, {})).toThrow(
      /--break-glass needs your own credential, not a name: --as alone is refused/,
    );
    expect(parseApplyOptions({ "break-glass": true, reason: "the launch is now" }, env)).toMatchObject({ breakGlass: true, token: tokenOf(ADMIN) });
    expect(() => parseApplyOptions({ for: "2h", until: "2026-12-02T18:00:00Z", as: ADMIN, reason: "r" }, env)).toThrow(/not both/);
    expect(parseApplyOptions({ for: "1h30m", as: ADMIN, reason: "r" }, env)).toMatchObject({ endsAfterSeconds: 5400 });
    // Asking is acting as someone too: a bare --as (with an end or not) is refused before the database starts.
    expect(() => parseApplyOptions({ for: "1h30m", as: ADMIN, reason: "r" }, {})).toThrow(/needs your own credential, not a name: --as alone is refused/);
    expect(() => parseApplyOptions({ as: ADMIN, reason: "r" }, {})).toThrow(/apply --as \(asking for a raise\) needs your own credential, not a name/);
    await fresh("cc.glass");
    const file = await catalogWith(endpointSpec("cc.glass", { day: 190 }));
    // A name alone, even a real admin's, does not break glass (runApplyFile holds it as well as the parser).
    await expect(apply(file, { as: ADMIN, breakGlass: true, reason: "launch moved up, nobody else awake" })).rejects.toThrow(/--as alone is refused/);
    // Someone else's token with --as naming the admin: refused, not mixed up.
    await expect(apply(file, { as: ADMIN, token: tokenOf(ADMIN2), breakGlass: true, reason: "launch moved up, nobody else awake" })).rejects.toMatchObject({
      code: "forbidden",
      message: expect.stringContaining(`(${ADMIN2})`),
    });
    await expect(apply(file, { token: tokenOf(OPERATOR), breakGlass: true, reason: "no admin awake tonight" })).rejects.toMatchObject({ code: "forbidden" });
    await expect(apply(file, { token: tokenOf(ADMIN), breakGlass: true, reason: "now" })).rejects.toMatchObject({
      code: expect.stringMatching(/reason_required|invalid_input/),
    });
    expect((await dayCeiling("cc.glass")).value).toBe(100);
    const out = await apply(file, { token: tokenOf(ADMIN), breakGlass: true, reason: "launch moved up, nobody else awake" });
    expect((await dayCeiling("cc.glass")).value).toBe(190);
    const [glass] = await requestsOf("cc.glass");
    expect(glass).toMatchObject({ state: "applied", breakGlass: true, decidedById: null, requestedBy: ADMIN });
    expect(out).toContain("applied by break glass (1), alerted to every destination:");
    await expect(by(ADMIN)("acknowledge", String(must(glass).id))).rejects.toMatchObject({ code: expect.stringMatching(/own_request|forbidden/) });
    expect(await by(ADMIN2)("acknowledge", String(must(glass).id))).toEqual([expect.stringMatching(new RegExp(`^#${must(glass).id} acknowledged: `))]);
  });

  it("every kind of raise in one file: each asked as its kind, the rest made at once; approved, the file converges", async () => {
    await fresh("cc.kinds");
    await fresh("cc.arch");
    await apply(await catalogWith({ ...endpointSpec("cc.arch"), archived: true }), {});
    const budget = {
      key: "b.kinds",
      name: "Kinds",
      scope: "global",
      window: "utc_day",
      value: 4_000_000,
      min: 0,
      max: 10_000_000,
      default: 1_000_000,
      members: ["cc.kinds"],
    } as const;
    const kinds = endpointSpec("cc.kinds", { perCallMax: 2, day: 250, dayMax: 300, month: 2500 });
    kinds.ceilings.push({ metric: "calls", scope: "global", window: "utc_day", value: 40, min: 0, max: 100, default: 10 });
    const newOne = endpointSpec("cc.new", { day: 150 });
    const write = async () => {
      const current = await exportCatalog(t.db);
      const others = current.endpoints.filter((e) => !["cc.kinds", "cc.arch", "cc.new"].includes(e.key));
      n += 1;
      const file = path.join(dir, `c${n}.json`);
      writeFileSync(
        file,
        JSON.stringify({
          ...current,
          endpoints: [...others, kinds, endpointSpec("cc.arch"), newOne],
          budgets: [...(current.budgets ?? []).filter((b) => b.key !== budget.key), budget],
        }),
      );
      return file;
    };
    const file = await write();
    const planned = await lines((print) => runPlanFile(t.db, file, print));
    expect(planned.filter((l) => l.includes("NEEDS APPROVAL")).length).toBe(6);
    expect(planned.at(-1)).toMatch(/need approval \(6 change request\(s\)\)/);
    await apply(file, { token: tokenOf(OPERATOR), reason: "the new tier" });
    // Made at once: the month lowered, cc.new created at its default; the rest waits.
    expect(await monthValue("cc.kinds")).toBe(2500);
    expect((await dayCeiling("cc.new")).value).toBe(100);
    expect((await dayCeiling("cc.kinds")).maxValue).toBe(200);
    const pending = (await cli("requests", "--json"))
      .flatMap((l) => JSON.parse(l) as { id: number; kind: string; requestedBy: string }[])
      .filter((r) => r.requestedBy === OPERATOR);
    expect(pending.map((r) => r.kind).sort()).toEqual([
      "budget.create",
      "ceiling.add",
      "ceiling.bounds",
      "ceiling.value",
      "endpoint.per_call_max",
      "endpoint.unarchive",
    ]);
    for (const r of pending) await by(ADMIN2)("approve", String(r.id));
    expect((await dayCeiling("cc.new")).value).toBe(150);
    expect((await dayCeiling("cc.kinds")).maxValue).toBe(300);
    // The day's value waited for its bounds: applied again, it is asked for, then nothing is left.
    const again = await apply(await write(), { token: tokenOf(OPERATOR) });
    const [valueRequest] = (await requestsOf("cc.kinds")).filter((r) => r.state === "pending");
    expect(valueRequest).toMatchObject({ kind: "ceiling.value", change: { ceilingId: (await dayCeiling("cc.kinds")).id, value: 250 } });
    expect(again.some((l) => l.startsWith(`  #${must(valueRequest).id} `))).toBe(true);
    await by(ADMIN)("approve", String(must(valueRequest).id));
    const last = await write();
    expect(await lines((print) => runPlanFile(t.db, last, print))).toEqual(["no changes: the database already matches the file"]);
  });

  it("a raise of 5x or more is retyped (--confirm-raise) before it is even asked for", async () => {
    await fresh("cc.five");
    const file = await catalogWith(endpointSpec("cc.five", { perCallMax: 5 }));
    await expect(apply(file, { token: tokenOf(OPERATOR) })).rejects.toMatchObject({ code: "confirmation_required" });
    expect(await requestsOf("cc.five")).toEqual([]);
    await apply(file, { token: tokenOf(OPERATOR), confirmRaise: true });
    const [request] = await requestsOf("cc.five");
    expect(request).toMatchObject({ kind: "endpoint.per_call_max", state: "pending", change: { endpointKey: "cc.five", perCallMax: 5 } });
  });

  it("a change that leans on a raise still waiting is refused with the file, by plan and apply alike", async () => {
    await fresh("cc.lean");
    const spec = endpointSpec("cc.lean");
    spec.ceilings.push({ metric: "units", scope: "caller", window: "utc_day", value: 20, min: 0, max: 50, default: 10 });
    const file = await catalogWith({ ...spec, overrides: [{ metric: "units", window: "utc_day", caller: "acct_1", value: 30, reason: "big customer" }] });
    await expect(lines((print) => runPlanFile(t.db, file, print))).rejects.toMatchObject({
      problems: [expect.stringContaining("is new and needs approval first")],
    });
    await expect(apply(file, { token: tokenOf(OPERATOR) })).rejects.toMatchObject({ problems: [expect.stringContaining("is new and needs approval first")] });
    expect(await requestsOf("cc.lean")).toEqual([]);
  });

  it("the CLI kill stays instant with a raise pending; approving the raise afterwards finds it stale", async () => {
    await fresh("cc.kill");
    await apply(await catalogWith(endpointSpec("cc.kill", { day: 150 })), { token: tokenOf(OPERATOR), endsAfterSeconds: 7200 });
    const [request] = await requestsOf("cc.kill");
    expect(request).toMatchObject({ endsAfterSeconds: 7200 });
    await killEndpoint(t.db, { endpointKey: "cc.kill", actor: { type: "cli", name: "ops" }, reason: "incident" });
    expect((await dayCeiling("cc.kill")).value).toBe(0);
    await expect(by(ADMIN)("approve", String(must(request).id))).rejects.toMatchObject({ code: "stale" });
    expect((await dayCeiling("cc.kill")).value).toBe(0);
    expect((await requestsOf("cc.kill"))[0]).toMatchObject({ state: "stale" });
  });
  it("approve, reject and acknowledge: a bare --as, an unknown, revoked, foreign or outdated token are refused; a valid one acts as its owner", async () => {
    await fresh("cc.token");
    await apply(await catalogWith(endpointSpec("cc.token", { day: 150 })), { token: tokenOf(OPERATOR) });
    const [request] = await requestsOf("cc.token");
    const id = String(must(request).id);
    // A name is not a proof, whoever it names.
    for (const argv of [
      ["approve", id, "--as", ADMIN],
      ["reject", id, "--reason", "no", "--as", ADMIN],
      ["acknowledge", id, "--as", ADMIN],
    ]) {
      await expect(cli(...argv)).rejects.toThrow(/needs your own credential, not a name: --as alone is refused/);
    }
    const run = (token: string, ...argv: string[]) => lines((print) => runChanges(t.db, parseChangesArgs(argv, { CEILINGS_STAFF_TOKEN: token }), print));
    // Unknown (never made here) and malformed.
    await expect(run("cst_abcdefgh_0123456789012345678901234567890123456789012", "approve", id)).rejects.toMatchObject({
      code: "forbidden",
      message: expect.stringContaining("is not known here"),
    });
    await expect(run("ck_abcdefgh_0123456789012345678901234567890123456789012", "approve", id)).rejects.toMatchObject({
      code: "forbidden",
      message: expect.stringContaining("not a personal token"),
    });
    // Foreign: ADMIN2's token with --as naming ADMIN.
    await expect(run(tokenOf(ADMIN2), "approve", id, "--as", ADMIN)).rejects.toMatchObject({
      code: "forbidden",
      message: expect.stringContaining(`is not who CEILINGS_STAFF_TOKEN proves (${ADMIN2})`),
    });
    // Revoked.
    const [ada] = await t.db.select().from(staff).where(eq(staff.email, ADMIN));
    const spare = await createStaffToken(t.db, { staffId: must(ada).id, name: "spare" });
    await revokeStaffToken(t.db, { id: spare.token.id, staffId: must(ada).id });
    await expect(run(spare.secret, "approve", id)).rejects.toMatchObject({ code: "forbidden", message: expect.stringContaining("was revoked") });
    // Outdated: made before the owner's password changed, or before a demotion.
    const old = await createStaffToken(t.db, { staffId: must(ada).id, name: "old" });
    await setStaffPassword(t.db, { email: ADMIN, password: "a brand new password", actor: { type: "cli", name: "ops" }, bcryptCost: 4 });
    await expect(run(old.secret, "approve", id)).rejects.toMatchObject({
      code: "forbidden",
      message: expect.stringContaining("ended when their password, role or state changed"),
    });
    await expect(run(tokenOf(ADMIN), "approve", id)).rejects.toMatchObject({ code: "forbidden" });
    tokens.set(ADMIN, (await createStaffToken(t.db, { staffId: must(ada).id, name: "after the password change" })).secret);
    const [bea] = await t.db.select().from(staff).where(eq(staff.email, ADMIN2));
    const beforeDemotion = await createStaffToken(t.db, { staffId: must(bea).id, name: "before" });
    await changeStaffRole(t.db, { email: ADMIN2, role: "operator", actor: { type: "cli", name: "ops" } });
    await changeStaffRole(t.db, { email: ADMIN2, role: "admin", actor: { type: "cli", name: "ops" } });
    await expect(run(beforeDemotion.secret, "approve", id)).rejects.toMatchObject({ code: "forbidden" });
    tokens.set(ADMIN2, (await createStaffToken(t.db, { staffId: must(bea).id, name: "after the demotion" })).secret);
    expect((await dayCeiling("cc.token")).value).toBe(100);
    expect(await requestsOf("cc.token")).toMatchObject([{ state: "pending" }]);
    // Valid: the owner acts, with or without a matching --as; last used is stamped.
    expect(await run(tokenOf(ADMIN), "approve", id, "--as", ADMIN.toUpperCase())).toEqual([expect.stringMatching(new RegExp(`^#${id} applied: `))]);
    expect(await requestsOf("cc.token")).toMatchObject([{ state: "applied", decidedBy: ADMIN }]);
    const stamped = await t.db
      .select()
      .from(staffTokens)
      .where(eq(staffTokens.staffId, must(ada).id));
    const used = new Map(stamped.map((x) => [x.name, x.lastUsedAt !== null]));
    expect([used.get("after the password change"), used.get("spare"), used.get("old")]).toEqual([true, false, false]);
  });
  it(
    "the real command (scripts/ceilings.ts): a bare --as (approve, cancel) exits 2 saying how to get a token; a revoked token exits 1; the owner's token approves",
    { timeout: 120_000 },
    async () => {
      await fresh("cc.proc");
      await apply(await catalogWith(endpointSpec("cc.proc", { day: 150 })), { token: tokenOf(OPERATOR) });
      const id = String(must((await requestsOf("cc.proc"))[0]).id);
      const run = (args: string[], token?: string) =>
        new Promise<{ code: number | null; out: string }>((resolve) => {
          const env = { ...process.env, DATABASE_URL: t.url, CEILINGS_STAFF_TOKEN: token ?? "" };
          execFile(path.join(process.cwd(), "node_modules/.bin/tsx"), ["scripts/ceilings.ts", ...args], { env, timeout: 60_000 }, (error, stdout, stderr) => {
            resolve({ code: error ? (typeof error.code === "number" ? error.code : 1) : 0, out: `${stdout}${stderr}` });
          });
        });
      const bare = await run(["approve", id, "--as", ADMIN2]);
      expect(bare.code).toBe(2);
      expect(bare.out).toContain("approve needs your own credential, not a name: --as alone is refused");
      // Asking and cancelling are the same claim of a name: a bare --as exits 2 before the database is touched.
      const cancel = await run(["cancel", id, "--as", OPERATOR]);
      expect([cancel.code, cancel.out]).toEqual([2, expect.stringContaining("cancel needs your own credential, not a name: --as alone is refused")]);
      const [bea] = await t.db.select().from(staff).where(eq(staff.email, ADMIN2));
      const spare = await createStaffToken(t.db, { staffId: must(bea).id, name: "spare" });
      await revokeStaffToken(t.db, { id: spare.token.id, staffId: must(bea).id });
      const revoked = await run(["approve", id], spare.secret);
      expect(revoked.code).toBe(1);
      expect(revoked.out).toContain("was revoked");
      expect((await dayCeiling("cc.proc")).value).toBe(100);
      const ok = await run(["approve", id, "--note", "from a shell"], tokenOf(ADMIN2));
      expect(ok).toMatchObject({ code: 0, out: expect.stringContaining(`#${id} applied: `) });
      expect(await requestsOf("cc.proc")).toMatchObject([{ state: "applied", decidedBy: ADMIN2, decisionNote: "from a shell" }]);
    },
  );
});
