// Values from a GET filter form: a field left empty means "no filter", so blank becomes undefined
// before any schema sees it, and what remains is trimmed.

export function blankToUndefined(v: string | undefined): string | undefined;
export function blankToUndefined(v: unknown): unknown;
export function blankToUndefined(v: unknown): unknown {
  if (typeof v !== "string") return v;
  const trimmed = v.trim();
  return trimmed === "" ? undefined : trimmed;
}

export type SearchParams = Record<string, string | string[] | undefined>;

/** One value per name, the first where a name repeats, as Next hands a page its query. */
export function firstValues(params: SearchParams): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(params)) {
    const value = Array.isArray(v) ? v[0] : v;
    if (value !== undefined) out[k] = value;
  }
  return out;
}
