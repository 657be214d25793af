import type { Drift } from "./types";

// Billed beside charged, as one verdict. The share is compared in integers (|diff| × 10,000 ≥
// basis points × the larger side) so a day exactly at the threshold is over, never lost to a float.

export type Measure = { units: number; micros: number };
export type DriftThreshold = { basisPoints: number; micros: number };

/**
 * How far the provider's bill is from what Ceilings charged. The share is in money; when neither
 * side has money (free parts, counted in units alone) it is in units, and the money threshold is
 * waived: there is no money to measure, and a units-only comparison must still be able to drift.
 */
export function driftOf(billed: Measure, charged: Measure, threshold: DriftThreshold, opts: { unitsOnly?: boolean } = {}): Drift {
  // A budget's day whose rows carry no money (unitsOnly): both sides' money is left out, and the
  // drift is in units, as on a day of free parts.
  if (opts.unitsOnly) return driftOf({ units: billed.units, micros: 0 }, { units: charged.units, micros: 0 }, threshold);
  const diffUnits = billed.units - charged.units;
  const diffMicros = billed.micros - charged.micros;
  const inMoney = billed.micros !== 0 || charged.micros !== 0;
  const diff = inMoney ? diffMicros : diffUnits;
  const larger = inMoney ? Math.max(billed.micros, charged.micros) : Math.max(billed.units, charged.units);
  const percent = larger === 0 ? 0 : (diff / larger) * 100;
  const shareOver = larger !== 0 && abs(BigInt(diff)) * 10_000n >= BigInt(threshold.basisPoints) * BigInt(larger);
  const moneyOver = !inMoney || Math.abs(diffMicros) >= threshold.micros;
  return {
    diffUnits,
    diffMicros,
    percent,
    over: diff !== 0 && shareOver && moneyOver,
    direction: diff > 0 ? "billed_more" : diff < 0 ? "charged_more" : "even",
  };
}

function abs(n: bigint): bigint {
  return n < 0n ? -n : n;
}
