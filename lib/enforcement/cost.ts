import { InputError } from "@/lib/errors";
// Cost-weighted units: a bulk call is charged for its items, not as one request, so a call of 300
// codes costs what 300 single calls cost and "bulk" cannot be a way around a ceiling.

export type BatchCost = {
  /**
   * Units to reserve for the items that fit, never above perCallMax. An empty call costs 1; a call
   * whose first item alone is over perCallMax costs 0 and fits nothing: refuse it.
   */
  units: number;
  /** How many items, from the first, fit in one call. */
  fits: number;
  /** Items the caller sent. */
  items: number;
  /** Units all the items would have cost. */
  totalUnits: number;
  /** True when some items did not fit: serve the first `fits` and say so, or refuse the call. */
  clamped: boolean;
  perCallMax: number;
};

export type CostOptions<T> = {
  /** The endpoint's per-call max: the largest reservation one call may make. */
  perCallMax: number;
  /** Units one item costs (a whole number, 1 or more); every item costs 1 without it. */
  weight?: (item: T, index: number) => number;
};

/**
 * The cost of a bulk call in units, clamped to the per-call max. Items fit in order, so the
 * answer names a prefix the service can serve; an empty call still costs 1 unit, since the call
 * itself is work.
 */
export function costOfBatch<T>(items: readonly T[], options: CostOptions<T>): BatchCost {
  const { perCallMax, weight } = options;
  if (!Number.isSafeInteger(perCallMax) || perCallMax < 1) {
    throw InputError.of(`perCallMax must be a whole number of 1 or more, got ${perCallMax}`);
  }
  let units = 0;
  let fits = 0;
  let totalUnits = 0;
  items.forEach((item, index) => {
    const w = weight ? weight(item, index) : 1;
    if (!Number.isSafeInteger(w) || w < 1) {
      throw InputError.of(`item ${index} must cost a whole number of 1 or more units, got ${w}`);
    }
    totalUnits += w;
    if (!Number.isSafeInteger(totalUnits)) throw InputError.of("the items together cost more units than can be counted");
    // Only a prefix fits: once one item overflows, later (smaller) ones are not squeezed in, so
    // the served items stay in the order the caller sent them.
    if (fits === index && units + w <= perCallMax) {
      units += w;
      fits += 1;
    }
  });
  if (items.length === 0) return { units: 1, fits: 0, items: 0, totalUnits: 0, clamped: false, perCallMax };
  return { units, fits, items: items.length, totalUnits, clamped: fits < items.length, perCallMax };
}
