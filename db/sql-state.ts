/** The SQLSTATE of a database error (`23505`), also when drizzle wrapped it in a cause. */
export function sqlState(error: unknown): string | undefined {
  for (let e: unknown = error; e && typeof e === "object"; e = "cause" in e ? e.cause : undefined) {
    if ("code" in e && typeof e.code === "string" && /^[0-9A-Z]{5}$/.test(e.code)) return e.code;
  }
  return undefined;
}
