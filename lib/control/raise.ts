// What counts as a raise (docs/change-control.md, Rules). Pure: the direct verbs and the requests
// decide with the same functions, on the rows they locked.

/**
 * A value is a raise when it is above the one in force; on a killed ceiling or budget (value 0) it
 * is compared with the value a restore would put back (the value from before the kill, or the
 * default when there is none), so restoring is not a raise and restoring higher is.
 */
export function isValueRaise(current: { value: number; valueBeforeKill: number | null; defaultValue: number }, applied: number): boolean {
  if (applied === 0) return false;
  const base = current.value === 0 ? (current.valueBeforeKill ?? current.defaultValue) : current.value;
  return applied > base;
}

/**
 * The value a ceiling or budget stands for: in force, or the one a restore puts back when it is at 0
 * (the value before the kill, or its default when nothing is remembered).
 */
export function standingValue(row: { value: number; valueBeforeKill: number | null; defaultValue: number }): number {
  return row.value > 0 ? row.value : (row.valueBeforeKill ?? row.defaultValue);
}

/**
 * New bounds (or fields) raise when their max is above the one in force, or when they pull the value
 * in force (or the one a restore puts back) up: a min above the value raises it. A default pulled
 * up is a raise where a restore would bring it back (at 0 with nothing remembered): the standing
 * value rises, and a restore is one person's. While a temporary raise is running (`revertTo`: the
 * lowest revert_to of its active raise ends, lib/control/raise-floor.ts), a min raised above the
 * value it puts back is a raise too: the end could not lower the value below it.
 */
export function isBoundsRaise(
  current: { maxValue: number; minValue?: number; value: number; valueBeforeKill: number | null; defaultValue?: number; revertTo?: number | null },
  next: { max: number; min?: number; value: number; valueBeforeKill: number | null; default?: number },
): boolean {
  const aboveRevert =
    current.revertTo !== undefined && current.revertTo !== null && next.min !== undefined && next.min > current.revertTo && next.min > (current.minValue ?? 0);
  const standingRises =
    current.defaultValue !== undefined &&
    next.default !== undefined &&
    standingValue({ ...next, defaultValue: next.default }) > standingValue({ ...current, defaultValue: current.defaultValue });
  return (
    next.max > current.maxValue || next.value > current.value || (next.valueBeforeKill ?? 0) > (current.valueBeforeKill ?? 0) || standingRises || aboveRevert
  );
}

/** A new ceiling or budget raises when its value is above its default. */
export function isNewValueRaise(spec: { value: number; default: number }): boolean {
  return spec.value > spec.default;
}

type Part = { name: string; pricePico: number };

/**
 * The part prices of an endpoint lowered: a part kept (by name) at a lower price, or a new part
 * priced below every part in force, or below the dearest part removed in the last 24 hours or by
 * this same edit (`removed`, read from the endpoint.update audit rows: lib/catalog/re-add.ts
 * recentlyRemovedParts). Removing a part is instant (its calls are refused), so without the last
 * test a part removed and added back cheaper, under its name or another, would be one person's.
 * Where a budget charges the endpoint, the same money then admits more calls. Each as a line
 * ("tokens 2,000 → 1,000 picos a unit"); none: not lowered.
 */
export function loweredPrices(before: readonly Part[], after: readonly Part[], removed: readonly Part[] = []): string[] {
  const was = new Map(before.map((p) => [p.name, p.pricePico]));
  const cheapest = before.length === 0 ? null : Math.min(...before.map((p) => p.pricePico));
  const kept = new Set(after.map((p) => p.name));
  const gone = [...removed, ...before.filter((p) => !kept.has(p.name))];
  const dearestGone = gone.reduce<Part | null>((d, p) => (d === null || p.pricePico > d.pricePico ? p : d), null);
  return after.flatMap((p) => {
    const old = was.get(p.name);
    if (old !== undefined) return p.pricePico < old ? [`${p.name} ${old} → ${p.pricePico} picos a unit`] : [];
    if (dearestGone !== null && p.pricePico < dearestGone.pricePico) {
      return [
        `new part ${p.name} at ${p.pricePico} picos a unit, below part ${dearestGone.name} (${dearestGone.pricePico}) removed by this change or in the last 24 hours`,
      ];
    }
    return cheapest !== null && p.pricePico < cheapest ? [`new part ${p.name} at ${p.pricePico} picos a unit, below every part in force (${cheapest})`] : [];
  });
}
