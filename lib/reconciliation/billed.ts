import { microsOfUnits } from "@/lib/money/price";
import type { EndpointPart } from "@/lib/vocabulary";

// What the provider billed one target on one day, from its mapped rows. When any row of the day
// carries the provider's own money, that money is the bill and rows of counts alone add units only:
// OpenAI and Anthropic report a model's tokens (usage) and its money (costs) as separate rows that
// one rule maps together, and pricing the tokens too would count the day twice. When no row carries
// money, each row is priced at its part (the rule's, else the endpoint's first part), rounded up per
// row as a reservation's money is. A budget has no price of its own, so its count-only rows add
// units and no money.

export type BilledRow = { units: number; costMicros: number | null; part: string | null };
export type Billed = { units: number; micros: number; money: "reported" | "priced" };

export function billedOf(rows: readonly BilledRow[], parts: readonly EndpointPart[] | null): Billed {
  const units = rows.reduce((sum, r) => sum + r.units, 0);
  const withMoney = rows.filter((r) => r.costMicros !== null);
  if (withMoney.length > 0) return { units, micros: withMoney.reduce((sum, r) => sum + (r.costMicros ?? 0), 0), money: "reported" };
  const micros = parts === null ? 0 : rows.reduce((sum, r) => sum + microsOfUnits(r.units, priceOf(parts, r.part)), 0);
  return { units, micros, money: "priced" };
}

function priceOf(parts: readonly EndpointPart[], part: string | null): number {
  // A part renamed since the rule was written falls back to the first part, as a rule without one.
  const named = part === null ? undefined : parts.find((p) => p.name === part);
  return (named ?? parts[0])?.pricePico ?? 0;
}
