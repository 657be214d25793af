import { microsOfUnits } from "@/lib/money/price";
import type { EndpointPart } from "@/lib/vocabulary";

// What the provider billed one target on one day, from its mapped rows. A row with the provider's
// own money counts that money; a row of counts alone is priced at its part (the rule's, else the
// endpoint's first part), rounded up per row as a reservation's money is. A budget has no price of
// its own, so its count-only rows add units and no money.

export type BilledRow = { units: number; costMicros: number | null; part: string | null };
export type Billed = { units: number; micros: number; money: "reported" | "priced" };

export function billedOf(rows: readonly BilledRow[], parts: readonly EndpointPart[] | null): Billed {
  let units = 0;
  let micros = 0;
  let reported = false;
  for (const r of rows) {
    units += r.units;
    if (r.costMicros !== null) {
      reported = true;
      micros += r.costMicros;
    } else if (parts !== null) {
      micros += microsOfUnits(r.units, priceOf(parts, r.part));
    }
  }
  return { units, micros, money: reported ? "reported" : "priced" };
}

function priceOf(parts: readonly EndpointPart[], part: string | null): number {
  // A part renamed since the rule was written falls back to the first part, as a rule without one.
  const named = part === null ? undefined : parts.find((p) => p.name === part);
  return (named ?? parts[0])?.pricePico ?? 0;
}
