import { eq } from "drizzle-orm";
import { z } from "zod";
import type { Db } from "@/db/client";
import { endpoints, type Endpoint } from "@/db/schema";
import { budgetKeysCharging } from "@/lib/budgets/write";
import { CatalogError } from "@/lib/limits/errors";
import { fieldsOf, lockedEndpoint, updateEndpointFields } from "@/lib/catalog/write";
import { recentlyRemovedParts } from "@/lib/catalog/re-add";
import { perCallMoneyIssue } from "@/lib/catalog/spec";
import { issueLine, InputError } from "@/lib/errors";
import { parseChange } from "./ceiling-kinds";
import { ChangeControlError } from "@/lib/control/errors";
import { type KindHandler, movedSince, staleMessage } from "./prepared";
import { loweredPrices } from "@/lib/control/raise";

// endpoint.prices: an endpoint's part prices, asked for when one is lowered while a live budget
// charges the endpoint (the same money then admits more calls), or a part added back cheaper than
// one removed in the last 24 hours (lib/control/raise.ts loweredPrices). Applied under the endpoint's lock
// through the endpoint edit's own write (updateEndpointFields), which refuses it without approval.

const Key = z.string({ error: "an endpoint key is required" }).min(1, "an endpoint key is required").max(64);
const Part = z.strictObject({ name: z.string().min(1).max(64), pricePico: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER) });
const Prices = z.strictObject({ endpointKey: Key, parts: z.array(Part).min(1).max(50) });

const partsOf = (e: Pick<Endpoint, "parts">) => e.parts.map((p) => ({ name: p.name, pricePico: p.pricePico }));
const show = (parts: readonly { name: string; pricePico: number }[]) => parts.map((p) => `${p.name}=${p.pricePico}`).join(", ");

async function endpointByKey(db: Db, key: string): Promise<Endpoint> {
  const [row] = await db.select().from(endpoints).where(eq(endpoints.key, key));
  if (!row) throw new ChangeControlError("not_found", `no endpoint '${key}'`);
  return row;
}

export const endpointPrices: KindHandler = {
  async prepare(db, raw) {
    const change = parseChange(Prices, raw);
    const endpoint = await endpointByKey(db, change.endpointKey);
    const names = change.parts.map((p) => p.name);
    if (new Set(names).size !== names.length) throw InputError.of("a part is listed twice");
    const money = perCallMoneyIssue({ perCallMax: endpoint.perCallMax, parts: change.parts });
    if (money) throw InputError.of(issueLine(money));
    if (show(partsOf(endpoint)) === show(change.parts)) throw new ChangeControlError("unchanged", "those are already its prices: nothing to ask");
    const lowered = loweredPrices(partsOf(endpoint), change.parts, await recentlyRemovedParts(db, endpoint.id));
    const charging = await budgetKeysCharging(db, endpoint.id);
    return {
      endpointId: endpoint.id,
      ceilingId: null,
      budgetId: null,
      confirm: null,
      mayEnd: false,
      change,
      before: { parts: partsOf(endpoint) },
      after: { parts: change.parts },
      summary: `${endpoint.key} prices ${lowered.join("; ") || show(change.parts)}${charging.length > 0 ? ` (charged by budget ${charging.join(", ")})` : ""}`,
      // A budget counts money, not calls: its worst case in money is the same; what moves is how many calls it admits.
      worstBefore: null,
      worstAfter: null,
      currency: endpoint.currency,
      raise: lowered.length > 0 && charging.length > 0,
    };
  },
  async apply({ tx, request, actor, control }) {
    const change = parseChange(Prices, request.change);
    let endpoint: Endpoint;
    try {
      endpoint = await lockedEndpoint(tx, change.endpointKey);
    } catch (error) {
      if (error instanceof CatalogError && error.code === "not_found") return { stale: error.message };
      throw error;
    }
    const moved = movedSince(request.before, { parts: partsOf(endpoint) });
    if (moved.length > 0) return { stale: staleMessage(moved) };
    await updateEndpointFields({ tx, actor, reason: request.reason, changeControl: control }, endpoint, { ...fieldsOf(endpoint), parts: change.parts });
    return { stale: null, raised: null };
  },
};
