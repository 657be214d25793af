// The words of reconciliation, shared by the pull, the comparison, the readiness card and the
// dashboard. See db/schema/reconciliation.ts for the tables.

export type { ProviderCap, ReconciliationDay, UsageSource, UsageSourceRule } from "@/db/schema/reconciliation";

export const usageSourceKinds = ["openai", "anthropic", "twilio", "sendgrid", "postmark", "ses", "file"] as const;
export type UsageSourceKind = (typeof usageSourceKinds)[number];

export const usageSourceKindLabels: Record<UsageSourceKind, string> = {
  openai: "OpenAI organization usage and costs API",
  anthropic: "Anthropic usage and cost report API",
  twilio: "Twilio usage records",
  sendgrid: "SendGrid email statistics",
  postmark: "Postmark outbound statistics",
  ses: "Amazon SES sending statistics",
  file: "CSV or JSON file (FOCUS exports too)",
};

/** The usage fields the API sources report an item's tokens in, each priced apart (see ReportedRow.field). */
export const usageFields = ["input", "output", "cached-input", "cache-read", "cache-write", "cache-write-1h"] as const;
export type UsageField = (typeof usageFields)[number];

/** A day as the provider counts it, in its source's time zone: "2026-12-01". */
export type ProviderDay = string;

/**
 * One row of what a provider reported for one day: an item (a model, a cost line item, a Twilio
 * category, a file's endpoint or item) with its units and, when the provider reports money, its
 * cost in micros of the source's currency. `raw` is the provider's row as received.
 */
export type ReportedRow = {
  day: ProviderDay;
  item: string;
  units: number;
  costMicros: number | null;
  raw: Record<string, unknown>;
  /**
   * The provider's usage field the units count, when it reports an item's usage in parts priced
   * apart (usageFields): "input", "output", "cached-input", "cache-write" (OpenAI); "input",
   * "output", "cache-read", "cache-write", "cache-write-1h" (Anthropic). Named like an endpoint's
   * parts, so a field is priced at the part of its own name unless the rule maps it to another.
   * Absent: one count.
   */
  field?: string;
  /** What the units are as the provider names them (Twilio's usage_unit, FOCUS's ConsumedUnit). */
  unit?: string;
  /** A roll-up of other rows of the day (Twilio's "sms"): kept as reported, never mapped nor billed. */
  rollup?: boolean;
};

/** What one pull or import wrote: the days it replaced (each whole), rows and rows no rule maps. */
export type PullResult = {
  sourceId: number;
  days: ProviderDay[];
  rows: number;
  unmapped: number;
  /** What staff should know about the mapping: a file's item naming an endpoint another source maps, left unmapped. */
  notes?: string[];
};

/** Billed beside charged for one endpoint or budget on one provider day, and how far apart. */
export type Drift = {
  /** billed − charged. Positive: more billed than charged (calls bypass Ceilings or settle low). */
  diffUnits: number;
  diffMicros: number;
  /** (billed − charged) / max(billed, charged) in money, as a percentage (−100..100); 0 when both are 0. */
  percent: number;
  /** Past the threshold: |percent| ≥ the source's share AND |diffMicros| ≥ its money. */
  over: boolean;
  direction: "billed_more" | "charged_more" | "even";
};

export type ReadinessColor = "green" | "amber" | "red";

/** One of the five answers on the readiness card: a color, the number behind it, and a sentence. */
export type ReadinessAnswer = {
  color: ReadinessColor;
  /** The number, ready to show: "90.0 %", "3 expired of 1,204", "none recorded". */
  figure: string;
  /** Why this color, in one sentence staff can act on. */
  detail: string;
};

export const readinessQuestions = ["reserved", "settled", "failClosed", "secondCap", "told"] as const;
export type ReadinessQuestion = (typeof readinessQuestions)[number];

export const readinessQuestionLabels: Record<ReadinessQuestion, string> = {
  reserved: "Reserved before spending",
  settled: "Settle discipline",
  failClosed: "Fail-closed health",
  secondCap: "Second cap at the provider",
  told: "Someone told",
};

export type Readiness = Record<ReadinessQuestion, ReadinessAnswer> & {
  /** The worst of the five. */
  overall: ReadinessColor;
};

/** Where the provider-side cap sits against Ceilings' worst case for the same window. */
export type SecondCapVerdict =
  | { state: "missing" }
  | { state: "above"; capText: string; worstText: string }
  | { state: "below"; capText: string; worstText: string }
  /** No global ceiling bounds that window, so there is no worst case to compare with. */
  | { state: "unbounded"; capText: string };
