import { formatPriceDecimal, parsePrice } from "@/lib/money/price";
import { DEFAULT_PART, type EndpointPart } from "@/lib/vocabulary";

// The priced parts of the endpoint forms as typed text, shared by the server page that fills the
// edit form and the client forms that preview them (a plain module, so both may call it).

/** One priced part as typed: its name and the price of one unit in the currency ("0.0000025"). */
export type PartRowText = { name: string; price: string };

export const DEFAULT_PART_ROWS: PartRowText[] = [{ name: DEFAULT_PART, price: "0" }];

export function partRowsOf(parts: readonly EndpointPart[]): PartRowText[] {
  return parts.map((p) => ({ name: p.name, price: formatPriceDecimal(p.pricePico) }));
}

/**
 * The parts as priced parts once every price reads, for the live sentences (the server parses for
 * real); undefined while one does not, so no worst case is stated from a part left out.
 */
export function previewParts(rows: readonly PartRowText[]): EndpointPart[] | undefined {
  const parts: EndpointPart[] = [];
  for (const r of rows) {
    const parsed = parsePrice(r.price);
    if (!parsed.ok) return undefined;
    parts.push({ name: r.name.trim() || DEFAULT_PART, pricePico: parsed.pricePico });
  }
  return parts.length > 0 ? parts : undefined;
}
