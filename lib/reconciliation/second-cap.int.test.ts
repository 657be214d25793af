import { InputError } from "@/lib/errors";
import { and, eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { auditEvents, providerCaps } from "@/db/schema";
import { skipWithoutDatabase } from "@/db/testing";
import { useTestDatabase } from "@/db/testing-suite";
import { insertEndpoint } from "@/lib/budgets/read-fixtures";

import { getProviderCap, recordProviderCap, removeProviderCap } from "./second-cap";

const actor = { type: "staff", email: "admin@test.local" } as const;

describe.skipIf(skipWithoutDatabase())("the second cap", () => {
  const t = useTestDatabase("recon_second_cap");

  const events = (endpointId: number) =>
    t.db
      .select()
      .from(auditEvents)
      .where(and(eq(auditEvents.endpointId, endpointId)))
      .orderBy(auditEvents.id);

  it("records, replaces and removes a cap, each audited with before and after", async () => {
    const e = await insertEndpoint(t.db);
    expect(await getProviderCap(t.db, e.id)).toBeNull();

    const first = await recordProviderCap(t.db, {
      endpointKey: e.key,
      input: { measure: "money", window: "month", amount: "50.25", setAt: "OpenAI project llm-prod, Limits" },
      actor,
    });
    expect(first).toMatchObject({
      endpointId: e.id,
      measure: "money",
      window: "month",
      amount: 50_250_000,
      setAt: "OpenAI project llm-prod, Limits",
      recordedBy: actor.email,
    });
    const second = await recordProviderCap(t.db, {
      endpointKey: e.key,
      input: { measure: "units", window: "day", amount: "20000", setAt: "Twilio console" },
      actor: { type: "cli", name: "ops" },
    });
    expect(second).toMatchObject({ measure: "units", window: "day", amount: 20_000, recordedBy: "ops" });
    expect(await getProviderCap(t.db, e.id)).toEqual(second);

    await removeProviderCap(t.db, { endpointKey: e.key, actor });
    expect(await getProviderCap(t.db, e.id)).toBeNull();

    const log = await events(e.id);
    expect(log.map((x) => [x.action, x.actor, x.endpointKey, x.previousValue, x.appliedValue])).toEqual([
      ["provider_cap.record", actor.email, e.key, null, 50_250_000],
      ["provider_cap.record", "ops", e.key, 50_250_000, 20_000],
      ["provider_cap.remove", actor.email, e.key, 20_000, null],
    ]);
    expect(log[0]?.details).toEqual({
      before: null,
      after: { measure: "money", window: "month", amount: 50_250_000, setAt: "OpenAI project llm-prod, Limits", currency: "USD" },
    });
    expect(log[1]?.details).toEqual({
      before: { measure: "money", window: "month", amount: 50_250_000, setAt: "OpenAI project llm-prod, Limits", currency: "USD" },
      after: { measure: "units", window: "day", amount: 20_000, setAt: "Twilio console" },
    });
    expect(log[2]?.details).toEqual({ before: { measure: "units", window: "day", amount: 20_000, setAt: "Twilio console" }, after: null });
  });

  it("refuses bad input, an unknown endpoint and removing what is not recorded, writing nothing", async () => {
    const e = await insertEndpoint(t.db);
    const bad = recordProviderCap(t.db, { endpointKey: e.key, input: { measure: "units", window: "day", amount: "1e9", setAt: "x" }, actor });
    await expect(bad).rejects.toThrow(InputError);
    await expect(bad).rejects.toMatchObject({ code: "invalid_input", message: "amount must be a whole number of units, such as 100000, got '1e9'" });
    await expect(
      recordProviderCap(t.db, { endpointKey: e.key, input: { measure: "money", window: "day", amount: "0", setAt: "" }, actor }),
    ).rejects.toMatchObject({ code: "invalid_input" });
    await expect(
      recordProviderCap(t.db, { endpointKey: "no.such", input: { measure: "units", window: "day", amount: "5", setAt: "x" }, actor }),
    ).rejects.toMatchObject({
      code: "not_found",
      message: "no endpoint 'no.such'",
    });
    await expect(removeProviderCap(t.db, { endpointKey: e.key, actor })).rejects.toMatchObject({
      code: "not_found",
      message: `no second cap is recorded for '${e.key}'`,
    });
    expect(await t.db.select().from(providerCaps).where(eq(providerCaps.endpointId, e.id))).toHaveLength(0);
    expect(await events(e.id)).toHaveLength(0);
  });
});
