// Reconciliation: the provider's own usage beside what Ceilings charged, per provider day; the
// second cap at the provider; the readiness card. The door to lib/reconciliation.

export { driftOf, type DriftThreshold, type Measure } from "./drift";
export { chargedBetween, type Charged } from "./charged";
export { billedOf, type Billed, type BilledRow } from "./billed";
export { compareSourceDays, recompareRecent } from "./compare";
export { reconciliationDedupeKey, reconciliationMessage } from "./alert";
export { driftDirectionSentence, driftPercentText } from "./words";
export { ProviderCapInput, describeCap, getProviderCap, parseCapAmount, recordProviderCap, removeProviderCap, secondCapVerdict } from "./second-cap";
export { readinessOf } from "./readiness";
export { failClosedAnswer, reservedAnswer, secondCapAnswer, settledAnswer, toldAnswer, worstColor } from "./readiness-answers";
export { runUsageSources, type UsageSourceSettings } from "./run";
export * from "./days";
export * from "./types";
