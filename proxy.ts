import { NextResponse, type NextRequest } from "next/server";
import { env } from "@/lib/env";
import { answerMethod, methodsOf } from "@/lib/http/methods";
import { pagePostRefusal } from "@/lib/http/page-post";
import { checkUrl } from "@/lib/http/strict-input";
import { securityHeaders } from "@/lib/security/headers";

// Two jobs. First, every response it sees gets the security headers, pages with a fresh CSP nonce
// that Next puts on its own inline scripts. Second, a convenience, not a boundary: a visitor
// without any session cookie is sent to sign in before a page renders. Every page, action and
// route checks the role itself. It also answers what no page or route should see: a broken URL
// (400), a method the path does not answer (405 with Allow; OPTIONS 204), and a POST to a page that
// is not a server action of our own pages (403 from another origin, 400 for a plain form).
const SESSION_COOKIES = ["next-auth.session-token", "__Secure-next-auth.session-token"];

function hasSessionCookie(request: NextRequest): boolean {
  // Large tokens are split into "<name>.0", "<name>.1", ... by next-auth.
  return request.cookies.getAll().some(({ name }) => SESSION_COOKIES.some((c) => name === c || name.startsWith(`${c}.`)));
}

/** Anything that may render as a document: every page gets a nonce (endpoint keys hold dots). */
function isDocument(pathname: string): boolean {
  return !pathname.startsWith("/api/") && !pathname.startsWith("/_next/");
}

/** API routes answer 401/403 themselves, and files such as /favicon.ico need no sign-in. */
function needsSignIn(pathname: string): boolean {
  return isDocument(pathname) && pathname !== "/login" && !/^\/[^/]+\.(ico|txt|png|svg|webmanifest|xml)$/.test(pathname);
}

function servedOverHttps(request: NextRequest): boolean {
  // Next fills x-forwarded-proto from the socket when no proxy set it; a forged "https" over
  // plain http only yields an HSTS header that browsers ignore on http.
  const forwarded = request.headers.get("x-forwarded-proto")?.split(",")[0]?.trim();
  return request.nextUrl.protocol === "https:" || forwarded === "https";
}

function withHeaders(response: NextResponse, headers: Record<string, string>): NextResponse {
  for (const [name, value] of Object.entries(headers)) response.headers.set(name, value);
  return response;
}

export function proxy(request: NextRequest) {
  const { pathname, search } = request.nextUrl;
  const page = isDocument(pathname);
  const nonce = page ? Buffer.from(crypto.getRandomValues(new Uint8Array(16))).toString("base64") : undefined;
  const headers = securityHeaders({ nonce, https: servedOverHttps(request), development: env().NODE_ENV === "development" });

  // The input boundary for route params and query strings: broken percent-encoding or a control
  // character is a 400 naming the part, before any page or route parses it.
  const raw = new URL(request.url);
  const bad = checkUrl(raw.pathname, raw.search);
  if (bad) {
    const body = pathname.startsWith("/api/")
      ? NextResponse.json({ error: { code: "invalid_input", message: bad.message } }, { status: 400, headers: { "cache-control": "no-store" } })
      : new NextResponse(`Bad request: ${bad.message}\n`, { status: 400, headers: { "content-type": "text/plain; charset=utf-8" } });
    return withHeaders(body, headers);
  }

  // OPTIONS, and a method the path does not answer: 204 or 405 with an Allow header listing exactly
  // its methods (lib/http/methods.ts), instead of Next's 405 without one or a page rendered for PUT.
  const method = answerMethod(pathname, request.method);
  if (method) return withHeaders(new NextResponse(method.body || null, { status: method.status, headers: method.headers }), headers);

  // A POST to a page that is not a server action of our own pages: 403 from another origin, 400 for
  // a plain form (lib/http/page-post.ts), signed in or not, instead of Next's 500 with a stack trace.
  const refused = methodsOf(pathname)?.kind === "page" ? pagePostRefusal(request) : null;
  if (refused) {
    const text = `${refused.status === 403 ? "Forbidden" : "Bad request"}: ${refused.message}\n`;
    return withHeaders(
      new NextResponse(text, { status: refused.status, headers: { "content-type": "text/plain; charset=utf-8", "cache-control": "no-store" } }),
      headers,
    );
  }

  if (needsSignIn(pathname) && !hasSessionCookie(request)) {
    const login = new URL("/login", request.url);
    login.searchParams.set("next", `${pathname}${search}`);
    return withHeaders(NextResponse.redirect(login), headers);
  }
  const requestHeaders = new Headers(request.headers);
  if (page) {
    // Next reads the nonce from the request's CSP header and stamps it on its inline scripts.
    requestHeaders.set("content-security-policy", headers["Content-Security-Policy"] ?? "");
    // Lets a page guard send a visitor whose session has ended back here after signing in again.
    requestHeaders.set("x-ceilings-path", `${pathname}${search}`);
  }
  return withHeaders(NextResponse.next({ request: { headers: requestHeaders } }), headers);
}

export const config = {
  // Everything but Next's static build output, which next.config.js gives the same headers.
  matcher: ["/((?!_next/static|_next/image).*)"],
};
