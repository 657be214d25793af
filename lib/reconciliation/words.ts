import type { Drift, ReadinessColor } from "./types";

// Reconciliation as people read it, shared by the endpoint page, the Reconciliation page and the
// chart (a client component: this file imports nothing but types).

/**
 * "+10.0 %", "−2.5 %", "0.0 %": signed, one decimal, so a small drift never reads as none. Cut to
 * the decimal, never rounded up: 1.96 % against a 2 % threshold reads "+1.9 % ok", not "+2.0 % ok"
 * beside another day's "+2.0 % over".
 */
export function driftPercentText(d: Pick<Drift, "percent">): string {
  // The epsilon keeps a percent computed as 1.9999999 from reading 1.9.
  const text = `${(Math.floor(Math.abs(d.percent) * 10 + 1e-9) / 10).toFixed(1)} %`;
  return d.percent > 0 ? `+${text}` : d.percent < 0 ? `−${text}` : text;
}

/** Which way the ledger is off, and what that usually means. */
export function driftDirectionSentence(d: Pick<Drift, "direction">): string {
  switch (d.direction) {
    case "billed_more":
      return "more billed than charged: calls bypass Ceilings or settle low";
    case "charged_more":
      return "less billed than charged: settles overstate";
    case "even":
      return "billed and charged agree";
  }
}

/** The words beside a color, so a readiness answer is never told by color alone. */
export const readinessColorWords: Record<ReadinessColor, string> = { green: "Good", amber: "Check", red: "Act" };

const ORDER: Record<ReadinessColor, number> = { green: 0, amber: 1, red: 2 };

/** The worse of colors: red over amber over green. */
export function worstColor(colors: readonly ReadinessColor[]): ReadinessColor {
  return colors.reduce<ReadinessColor>((worst, c) => (ORDER[c] > ORDER[worst] ? c : worst), "green");
}
