// The security headers every response carries (proxy.ts for pages and routes, next.config.js for
// Next's static files). Kept in one pure function so a unit test can pin each header.

export type SecurityHeaderOptions = {
  /** Per-request nonce for Next's inline scripts; absent for responses that run no script. */
  nonce?: string;
  /** Whether this response is served over https: HSTS over plain http is ignored and misleading. */
  https: boolean;
  /** next dev evaluates code with eval() for fast refresh; production never does. */
  development?: boolean;
};

// Nothing here uses the camera, microphone, location, payment or USB: turned off, so a script
// injected despite the CSP cannot ask for them either.
export const PERMISSIONS_POLICY = [
  "accelerometer=()",
  "autoplay=()",
  "camera=()",
  "display-capture=()",
  "geolocation=()",
  "gyroscope=()",
  "magnetometer=()",
  "microphone=()",
  "midi=()",
  "payment=()",
  "publickey-credentials-get=()",
  "usb=()",
  "browsing-topics=()",
].join(", ");

export const HSTS = "max-age=63072000; includeSubDomains";

export function contentSecurityPolicy(options: SecurityHeaderOptions): string {
  const script = options.nonce
    ? // 'strict-dynamic' lets the nonced bootstrap load Next's chunks; nothing else runs.
      `script-src 'self' 'nonce-${options.nonce}' 'strict-dynamic'${options.development ? " 'unsafe-eval'" : ""}`
    : "script-src 'none'";
  return [
    "default-src 'self'",
    script,
    // React and recharts set style attributes, which nonces cannot cover; styles cannot run code.
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data: blob:",
    "font-src 'self'",
    "connect-src 'self'",
    "object-src 'none'",
    "base-uri 'self'",
    "form-action 'self'",
    // The kill switch must never be clickable inside someone else's page.
    "frame-ancestors 'none'",
  ].join("; ");
}

export function securityHeaders(options: SecurityHeaderOptions): Record<string, string> {
  const headers: Record<string, string> = {
    "Content-Security-Policy": contentSecurityPolicy(options),
    // For browsers that predate frame-ancestors.
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
    "Permissions-Policy": PERMISSIONS_POLICY,
  };
  if (options.https) headers["Strict-Transport-Security"] = HSTS;
  return headers;
}
