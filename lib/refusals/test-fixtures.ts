import type { Db } from "@/db/client";
import { refusals } from "@/db/schema";
import type { RefusalGate } from "./filters";

// Hand-made refusal rows for integration tests: explicit times, so every filter's answer is known.

export type RefusalSpec = {
  endpointId: number;
  endpointKey: string;
  at: Date;
  gate?: RefusalGate;
  caller?: string;
  destination?: string;
  count?: number;
  amount?: number;
  remaining?: number | null;
  ceilingId?: number | null;
  requestId?: string;
};

let serial = 0;

export async function insertRefusals(db: Db, specs: RefusalSpec[]): Promise<number[]> {
  if (specs.length === 0) return [];
  const rows = await db
    .insert(refusals)
    .values(
      specs.map((s) => {
        serial += 1;
        return {
          at: s.at,
          lastAt: s.at,
          // Unique per row so the dedupe index never folds two hand-made rows.
          bucket: new Date(s.at.getTime() + serial),
          endpointId: s.endpointId,
          endpointKey: s.endpointKey,
          ceilingId: s.ceilingId ?? null,
          gate: s.gate ?? "ceiling",
          caller: s.caller ?? "",
          destination: s.destination ?? "",
          amount: s.amount ?? 1,
          remaining: s.remaining ?? null,
          count: s.count ?? 1,
          requestId: s.requestId ?? `req_${serial}`,
          detail: "test refusal",
        };
      }),
    )
    .returning({ id: refusals.id });
  return rows.map((r) => r.id);
}

export const minutesAgo = (base: Date, m: number) => new Date(base.getTime() - m * 60_000);
