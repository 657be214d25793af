// A POST to a dashboard page is only ever a server action sent by a script of one of our own pages:
// same origin, a Next-Action header. Every form of the dashboard runs by script (its submit button
// stays disabled until the page is hydrated), so no page takes a plain form post. Next alone
// answered a form post from another origin with a 500 and logged a stack trace ("Invalid Server
// Actions request"), and a plain same-origin form post with a 400 or a rendered page depending on
// its encoding. proxy.ts answers these first. Pure: no Next.

export type PagePostRefusal = { status: 400 | 403; message: string };

function hostOf(origin: string): string | null {
  try {
    return new URL(origin).host;
  } catch {
    return null;
  }
}

/**
 * True when a browser says the request comes from another origin: Sec-Fetch-Site when it is sent
 * (every current browser sends it), else an Origin whose host is not this server's. The server's
 * host is the Host header or, behind a proxy, X-Forwarded-Host, which is the one Next's own
 * server-action check compares. A request that says neither (a script, curl) is not a browser's
 * cross-origin form, and is left to the checks after this one.
 */
export function isCrossOriginRequest(request: Request): boolean {
  const site = request.headers.get("sec-fetch-site");
  if (site !== null) return site !== "same-origin" && site !== "none";
  const origin = request.headers.get("origin");
  if (origin === null) return false;
  const host = hostOf(origin);
  if (host === null) return true; // "null" (a sandboxed frame, a file) or garbage
  const own = [request.headers.get("host"), request.headers.get("x-forwarded-host")?.split(",")[0]?.trim()];
  return !own.includes(host);
}

/** A body a plain HTML form sends (text/plain too: a form may post it). */
function isFormBody(contentType: string | null): boolean {
  const type = (contentType ?? "").split(";")[0]?.trim().toLowerCase() ?? "";
  return type === "application/x-www-form-urlencoded" || type === "multipart/form-data" || type === "text/plain";
}

/**
 * The answer to a POST to a page that is not a server action of ours, or null to let it through
 * to Next: 403 for one from another origin (with or without a Next-Action header), 400 for a form
 * posted without the Next-Action header a server action carries.
 */
export function pagePostRefusal(request: Request): PagePostRefusal | null {
  if (request.method !== "POST") return null;
  if (isCrossOriginRequest(request)) return { status: 403, message: "a form on another site cannot post to this dashboard" };
  if (!request.headers.has("next-action") && isFormBody(request.headers.get("content-type"))) {
    return { status: 400, message: "this page takes no form post: its forms run in the page, by script" };
  }
  return null;
}
