import { NextResponse, type NextRequest } from "next/server";

// A convenience, not a boundary: it only spares a visitor without any session cookie a page
// render before the redirect to sign in. Every page, action and route checks the role itself.
const SESSION_COOKIES = ["next-auth.session-token", "__Secure-next-auth.session-token"];

function hasSessionCookie(request: NextRequest): boolean {
  // Large tokens are split into "<name>.0", "<name>.1", ... by next-auth.
  return request.cookies.getAll().some(({ name }) => SESSION_COOKIES.some((c) => name === c || name.startsWith(`${c}.`)));
}

export function proxy(request: NextRequest) {
  const { pathname, search } = request.nextUrl;
  if (pathname === "/login") return NextResponse.next();
  if (!hasSessionCookie(request)) {
    const login = new URL("/login", request.url);
    login.searchParams.set("next", `${pathname}${search}`);
    return NextResponse.redirect(login);
  }
  // Lets a page guard send a visitor whose session has ended back here after signing in again.
  const headers = new Headers(request.headers);
  headers.set("x-ceilings-path", `${pathname}${search}`);
  return NextResponse.next({ request: { headers } });
}

export const config = {
  // Pages only: never the API (its routes answer 401/403 themselves), Next's assets, or files.
  matcher: ["/((?!api/|_next/|favicon\\.ico|robots\\.txt|.*\\.[a-zA-Z0-9]+$).*)"],
};
