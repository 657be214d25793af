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
 * New bounds raise when their max is above the one in force, or when they pull the value in force
 * (or the one a restore puts back) up: a min above the value raises it.
 */
export function isBoundsRaise(
  current: { maxValue: number; value: number; valueBeforeKill: number | null },
  next: { max: number; value: number; valueBeforeKill: number | null },
): boolean {
  return next.max > current.maxValue || next.value > current.value || (next.valueBeforeKill ?? 0) > (current.valueBeforeKill ?? 0);
}

/** A new ceiling or budget raises when its value is above its default. */
export function isNewValueRaise(spec: { value: number; default: number }): boolean {
  return spec.value > spec.default;
}
