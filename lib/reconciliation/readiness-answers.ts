import { formatCount, formatMoney } from "@/lib/format";
import { driftPercentText } from "./words";
import { driftOf, type DriftThreshold, type Measure } from "./drift";
import type { ReadinessAnswer, ReadinessColor, SecondCapVerdict } from "./types";

// The five answers of the readiness card, each from numbers already read (readiness.ts reads them
// for every endpoint at once). Pure, so each color of each question is tested without a database.

const pct = (ratio: number) => `${(ratio * 100).toFixed(1)} %`;

export type ReservedFacts = {
  mapped: boolean;
  days: number;
  billed: Measure;
  charged: Measure;
  threshold: DriftThreshold | null;
  currency: string;
  /**
   * Money the endpoint's source billed on items no rule maps over the same 7 days, when at least
   * its unmapped threshold: it may be this endpoint's usage through a model nobody mapped.
   */
  unmapped?: { source: string; micros: number } | null;
};

/**
 * Reserved before spending, with the money its source billed on unmapped items: a green answer
 * turns amber (the share is of what is mapped, and something is not), a red one says it too.
 */
export function reservedAnswer(f: ReservedFacts): ReadinessAnswer {
  const answer = reservedShare(f);
  if (!f.unmapped || f.unmapped.micros <= 0) return answer;
  const sentence = `${f.unmapped.source} also billed ${formatMoney(f.unmapped.micros, f.currency)} on items no rule maps in the last 7 days: if this endpoint spends them, map them.`;
  return {
    color: answer.color === "green" ? "amber" : answer.color,
    figure: `${answer.figure}, ${formatMoney(f.unmapped.micros, f.currency)} unmapped`,
    detail: `${answer.detail} ${sentence}`,
  };
}

/** What Ceilings charged as a share of what the provider billed, 7 days. */
function reservedShare(f: ReservedFacts): ReadinessAnswer {
  if (!f.mapped && f.days === 0) {
    return {
      color: "amber",
      figure: "not reconciled",
      detail: "No usage source maps this endpoint: connect one on the Reconciliation page to compare the provider's bill with what Ceilings charged.",
    };
  }
  if (f.days === 0 || f.threshold === null) {
    return {
      color: "amber",
      figure: "not reconciled",
      detail: "No final day yet: a provider day counts once it is over, the provider has reported it and its reservations are no longer held.",
    };
  }
  const inMoney = f.billed.micros !== 0 || f.charged.micros !== 0;
  const billed = inMoney ? f.billed.micros : f.billed.units;
  const charged = inMoney ? f.charged.micros : f.charged.units;
  const drift = driftOf(f.billed, f.charged, f.threshold);
  const figure = billed === 0 ? (charged === 0 ? "nothing billed" : "nothing billed, some charged") : pct(charged / billed);
  const span = `over ${formatCount(f.days)} compared ${f.days === 1 ? "day" : "days"} of the last 7`;
  const gap = inMoney ? formatMoney(Math.abs(drift.diffMicros), f.currency) : `${formatCount(Math.abs(drift.diffUnits))} units`;
  if (drift.over && drift.direction === "billed_more") {
    return {
      color: "red",
      figure,
      detail: `The provider billed ${gap} (${driftPercentText(drift)}) more than Ceilings charged ${span}: calls bypass Ceilings or settle low.`,
    };
  }
  if (drift.over) {
    return { color: "amber", figure, detail: `Ceilings charged ${gap} (${driftPercentText(drift)}) more than the provider billed ${span}: settles overstate.` };
  }
  // Within the source's threshold is green, whatever the share (docs/reconciliation.md): the
  // threshold is the staff's own word for how close is close enough.
  const what =
    billed === 0
      ? charged === 0
        ? "Ceilings charged as much as the provider billed"
        : "Ceilings charged a little while the provider billed nothing"
      : `Ceilings charged ${figure} of what the provider billed`;
  return { color: "green", figure, detail: `${what} ${span}, within the source's threshold.` };
}

export type SettledFacts = { settled: number; released: number; expired: number; held: number };

/**
 * Settle discipline: reservations of 7 days the service resolved itself, against those that expired.
 * The counts come from the worker's rollup (ledger-days.ts); `asOf` ("14:20 UTC") when they are
 * older than one of its runs, so a stopped worker shows in the figure.
 */
export function settledAnswer(f: SettledFacts, asOf: string | null = null): ReadinessAnswer {
  const resolved = f.settled + f.released;
  const total = resolved + f.expired;
  const stale = asOf === null ? "" : ` as of ${asOf}`;
  if (total === 0) {
    const held = f.held > 0 ? ` (${formatCount(f.held)} still held)` : "";
    return { color: "amber", figure: `no reservations${stale}`, detail: `No reservation of the last 7 days has been resolved yet${held}: nothing to judge.` };
  }
  const share = resolved / total;
  const color: ReadinessColor = share >= 0.99 ? "green" : share >= 0.95 ? "amber" : "red";
  const figure = `${formatCount(f.expired)} expired of ${formatCount(total)}${stale}`;
  const detail =
    color === "green"
      ? `The service settled or released ${pct(share)} of its reservations in the last 7 days.`
      : `Only ${pct(share)} of the last 7 days' reservations were settled or released; the rest expired and count as fully spent: settle or release every reservation.`;
  return { color, figure, detail };
}

/** Fail-closed health: unavailable refusals in 7 days (the gate refused because it could not decide). */
export function failClosedAnswer(unavailable: number): ReadinessAnswer {
  const figure = `${formatCount(unavailable)} unavailable ${unavailable === 1 ? "refusal" : "refusals"} in 7 days`;
  if (unavailable === 0) return { color: "green", figure, detail: "Every call in the last 7 days got an answer from Ceilings." };
  const color: ReadinessColor = unavailable >= 100 ? "red" : "amber";
  return {
    color,
    figure,
    detail: "Calls were refused because Ceilings could not be reached in time: it failed closed, as it should, but the service lost those calls.",
  };
}

/** Second cap at the provider, from its verdict. */
export function secondCapAnswer(v: SecondCapVerdict): ReadinessAnswer {
  switch (v.state) {
    case "missing":
      return {
        color: "red",
        figure: "none recorded",
        detail: "No limit at the provider is recorded: if Ceilings were bypassed or misconfigured, nothing else would stop spend. Set one and record it.",
      };
    case "above":
      return {
        color: "green",
        figure: v.capText,
        detail: `The provider's cap is at or above Ceilings' worst case (${v.worstText}): a backstop, as it should be.`,
      };
    case "below":
      return {
        color: "amber",
        figure: v.capText,
        detail: `The provider's cap is below Ceilings' worst case (${v.worstText}): the provider binds first, so a ceiling would never be what stops spend.`,
      };
    case "unbounded":
      return {
        color: "amber",
        figure: v.capText,
        detail: "No global ceiling bounds that window, so Ceilings has no worst case to compare the provider's cap with.",
      };
  }
}

export type ToldFacts = { enabledDestinations: number; latest: "delivered" | "failed" | null };

/** Someone told: alerts reach an enabled destination, and the last delivery to one got through. */
export function toldAnswer(f: ToldFacts): ReadinessAnswer {
  const figure = `${formatCount(f.enabledDestinations)} enabled ${f.enabledDestinations === 1 ? "destination" : "destinations"}`;
  if (f.enabledDestinations === 0) return { color: "red", figure, detail: "No enabled alert destination: alerts reach nobody. Add one on the Alerts page." };
  if (f.latest === "delivered") return { color: "green", figure, detail: "The latest alert delivery succeeded." };
  if (f.latest === "failed") return { color: "amber", figure, detail: "The latest alert delivery failed: check the destination on the Alerts page." };
  return { color: "amber", figure, detail: "No alert has been delivered to an enabled destination yet, so nobody has been seen to be told." };
}

const RANK: Record<ReadinessColor, number> = { green: 0, amber: 1, red: 2 };

export function worstColor(colors: readonly ReadinessColor[]): ReadinessColor {
  return colors.reduce<ReadinessColor>((worst, c) => (RANK[c] > RANK[worst] ? c : worst), "green");
}
