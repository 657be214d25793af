// Route handlers get no CSRF protection from Next (server actions do). A state-changing request
// must come from our own pages: browsers send Sec-Fetch-Site, and Origin on every POST.

function ownHost(request: Request): string {
  return request.headers.get("host") ?? new URL(request.url).host;
}

/** True when a browser says the request was started by a page of this origin. */
export function isSameOriginRequest(request: Request): boolean {
  const site = request.headers.get("sec-fetch-site");
  if (site !== null) return site === "same-origin";
  const origin = request.headers.get("origin");
  if (origin === null || origin === "null") return false;
  try {
    return new URL(origin).host === ownHost(request);
  } catch {
    return false;
  }
}
