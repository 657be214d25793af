import type { UsageSourceRule } from "./types";

// Which rule maps a provider item: an exact match beats any prefix (`match` ending in `*`), and
// the longest prefix wins, so `gpt-4o-mini*` takes "gpt-4o-mini-2024-07-18" from `gpt-4o*`.
// Matching is case-sensitive: providers name their models and categories exactly.

/** The rule that maps `item`, or null when none does (the row is kept, unmapped). */
export function matchRule<R extends Pick<UsageSourceRule, "match">>(rules: readonly R[], item: string): R | null {
  let best: R | null = null;
  let bestLength = -1;
  for (const rule of rules) {
    if (rule.match === item) return rule;
    if (!rule.match.endsWith("*")) continue;
    const prefix = rule.match.slice(0, -1);
    if (item.startsWith(prefix) && prefix.length > bestLength) {
      best = rule;
      bestLength = prefix.length;
    }
  }
  return best;
}
