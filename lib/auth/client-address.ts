/**
 * The address a sign-in attempt is counted against, read from X-Forwarded-For only as far as the
 * operator says proxies stand in front (TRUSTED_PROXY_HOPS). Each trusted proxy appends the address
 * it saw, so with N hops the client is the N-th entry from the right; everything left of it is
 * whatever the client chose to send. With no hops the header is the client's own words (Next
 * keeps a client-sent value and exposes no socket address), so the address is unknown: null.
 */
export function clientAddress(headers: Record<string, unknown>, trustedProxyHops = 0): string | null {
  if (trustedProxyHops <= 0) return null;
  const forwarded = headerValue(headers["x-forwarded-for"]);
  if (!forwarded) return null;
  const hops = forwarded
    .split(",")
    .map((h) => h.trim())
    .filter((h) => h.length > 0);
  // Fewer entries than trusted proxies: the request did not come through all of them.
  if (hops.length < trustedProxyHops) return null;
  const address = hops[hops.length - trustedProxyHops];
  return address ? address.slice(0, 100) : null;
}

function headerValue(value: unknown): string | undefined {
  if (typeof value === "string") return value;
  if (Array.isArray(value)) return value.filter((v) => typeof v === "string").join(",");
  return undefined;
}
