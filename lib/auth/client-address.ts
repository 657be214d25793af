/**
 * The address a sign-in attempt is counted against. Next sets X-Forwarded-For to the socket
 * address only when the request has none, and a reverse proxy appends the address it saw, so the
 * rightmost entry is the closest hop we can trust. A client talking to Next directly can still
 * forge it; the per-account limit holds regardless.
 */
export function clientAddress(headers: Record<string, unknown>): string | null {
  const forwarded = headerValue(headers["x-forwarded-for"]);
  if (forwarded) {
    const hops = forwarded.split(",").map((h) => h.trim()).filter((h) => h.length > 0);
    const last = hops.at(-1);
    if (last) return last.slice(0, 100);
  }
  const realIp = headerValue(headers["x-real-ip"])?.trim();
  return realIp ? realIp.slice(0, 100) : null;
}

function headerValue(value: unknown): string | undefined {
  if (typeof value === "string") return value;
  if (Array.isArray(value)) return value.filter((v) => typeof v === "string").join(",");
  return undefined;
}
