import { and, eq, gt } from "drizzle-orm";
import type { Db } from "@/db/client";
import { auditEvents } from "@/db/schema";
import { isNewValueRaise } from "@/lib/control/raise";
import { type CeilingSpec, ceilingIdentity } from "./spec";

// Removing a ceiling is instant and one person's (it lowers nothing, but the rules keep it simple);
// adding one back at a value equal to a new, self-typed default would then be "not a raise". So a
// ceiling added to an existing endpoint is compared with any ceiling of the same identity (metric,
// scope, window, destination kind) removed from it in the last 24 hours, read from the
// ceiling.remove audit rows (their details hold the removed ceiling): a default above what that
// one stood for is a raise.

export const RE_ADD_WINDOW_MS = 24 * 60 * 60 * 1000;

type Removed = { value?: unknown; default?: unknown; killed?: unknown; destinationKind?: unknown } & Parameters<typeof ceilingIdentity>[0];

const sameCeiling = (a: Removed, b: Pick<CeilingSpec, "metric" | "scope" | "window" | "windowSeconds" | "destinationKind">) =>
  ceilingIdentity(a) === ceilingIdentity(b) && (a.destinationKind ?? null) === (b.destinationKind ?? null);

/** The lowest value a same-identity ceiling removed in the last 24 hours stood for (in force, or what a restore put back); null if none. */
export async function recentlyRemovedValue(db: Db, endpointId: number, spec: CeilingSpec, now = new Date()): Promise<number | null> {
  const rows = await db
    .select({ details: auditEvents.details })
    .from(auditEvents)
    .where(
      and(eq(auditEvents.endpointId, endpointId), eq(auditEvents.action, "ceiling.remove"), gt(auditEvents.at, new Date(now.getTime() - RE_ADD_WINDOW_MS))),
    );
  const values = rows
    .map((r) => (r.details as { before?: Removed } | null)?.before)
    .filter((b): b is Removed => !!b && typeof b.metric === "string" && sameCeiling(b, spec))
    // ceilingSpecOf: value is the one a restore puts back when killed; 0 unkilled means its default stands.
    .map((b) => (typeof b.value === "number" && b.value > 0 ? b.value : typeof b.default === "number" ? b.default : 0));
  return values.length === 0 ? null : Math.min(...values);
}

/** A new ceiling on an existing endpoint raises when above its default, or when it stands above one just removed. */
export async function isAddRaise(db: Db, endpointId: number, spec: CeilingSpec, now?: Date): Promise<{ raise: boolean; removed: number | null }> {
  const removed = await recentlyRemovedValue(db, endpointId, spec, now);
  return { raise: isNewValueRaise(spec) || (removed !== null && Math.max(spec.value, spec.default) > removed), removed };
}

// The same for an endpoint's parts: removing a part is instant (calls naming it are refused), so a
// part added back cheaper (under its name or another) is compared with the parts removed in the last
// 24 hours too (lib/control/raise.ts loweredPrices). Every path that changes parts writes one
// endpoint.update audit row holding the parts before and after (lib/catalog/write.ts).

type PartRow = { name: string; pricePico: number };
const isParts = (v: unknown): v is PartRow[] =>
  Array.isArray(v) &&
  v.every((p) => typeof p === "object" && p !== null && typeof (p as PartRow).name === "string" && typeof (p as PartRow).pricePico === "number");

/** The parts removed from the endpoint in the last 24 hours, each at the price it had then (a name removed twice: each time). */
export async function recentlyRemovedParts(db: Db, endpointId: number, now = new Date()): Promise<PartRow[]> {
  const rows = await db
    .select({ details: auditEvents.details })
    .from(auditEvents)
    .where(
      and(eq(auditEvents.endpointId, endpointId), eq(auditEvents.action, "endpoint.update"), gt(auditEvents.at, new Date(now.getTime() - RE_ADD_WINDOW_MS))),
    );
  return rows.flatMap((r) => {
    const parts = (r.details as { changes?: { parts?: { before?: unknown; after?: unknown } } } | null)?.changes?.parts;
    if (!parts || !isParts(parts.before) || !isParts(parts.after)) return [];
    const after = new Set(parts.after.map((p) => p.name));
    return parts.before.filter((p) => !after.has(p.name)).map((p) => ({ name: p.name, pricePico: p.pricePico }));
  });
}
