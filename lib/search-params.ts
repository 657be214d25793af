// Values from a GET filter form: a field left empty means "no filter", so blank becomes undefined
// before any schema sees it, and what remains is trimmed.

export function blankToUndefined(v: string | undefined): string | undefined;
export function blankToUndefined(v: unknown): unknown;
export function blankToUndefined(v: unknown): unknown {
  if (typeof v !== "string") return v;
  const trimmed = v.trim();
  return trimmed === "" ? undefined : trimmed;
}
