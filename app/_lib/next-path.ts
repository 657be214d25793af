/**
 * Where to send someone after sign-in. Only same-site paths are accepted: "//evil.example" and
 * "/\evil.example" are read by browsers as other hosts, so they fall back to the overview.
 */
export function safeNextPath(raw: unknown): string {
  if (typeof raw !== "string" || raw.length === 0 || raw.length > 2000) return "/";
  if (!raw.startsWith("/") || raw.startsWith("//") || raw.startsWith("/\\")) return "/";
  if ([...raw].some((c) => c.charCodeAt(0) < 0x20)) return "/";
  if (raw === "/login" || raw.startsWith("/login?") || raw.startsWith("/api/")) return "/";
  return raw;
}
