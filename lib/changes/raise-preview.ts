// Whether a value typed in an edit form is a raise that needs a second admin, decided in the
// browser to offer "Ask for approval" before anything is sent. The server decides again
// (lib/changes); this only chooses which buttons the form shows. Pure: client components import it.

export type ValueInForce = { current: number; valueBeforeKill: number | null; defaultValue: number };

/**
 * A kill is never a raise. On a killed value, the value from before the kill (else the default) is
 * what a restore puts back: only a value above it is a raise. Otherwise any value above the one in force.
 */
export function valueNeedsApproval(applied: number, v: ValueInForce): boolean {
  if (applied === 0) return false;
  if (v.current === 0) return applied > (v.valueBeforeKill ?? v.defaultValue);
  return applied > v.current;
}
