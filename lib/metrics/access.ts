import { createHash, timingSafeEqual } from "node:crypto";

// Who may read metrics. The labels name endpoints and accounts' traffic, so they are not public:
// a bearer token from METRICS_TOKEN, compared in constant time. Without a token the app answers
// 403 (a Next route cannot see the socket, and X-Forwarded-For can be forged by a direct client);
// the worker's own port is bound to loopback, where the socket itself is the check.

export type Access = { ok: true } | { ok: false; status: 401 | 403; message: string };

const digest = (s: string) => createHash("sha256").update(s).digest();

export function checkMetricsAccess(authorization: string | null, token: string | undefined, opts: { loopbackSocket?: boolean } = {}): Access {
  if (token === undefined) {
    if (opts.loopbackSocket) return { ok: true };
    return { ok: false, status: 403, message: "metrics are off: set METRICS_TOKEN and send it as 'Authorization: Bearer <token>'" };
  }
  const given = /^Bearer (.+)$/.exec(authorization ?? "")?.[1];
  if (given === undefined) return { ok: false, status: 401, message: "send 'Authorization: Bearer <METRICS_TOKEN>'" };
  // Hashing first makes the comparison constant-time whatever the lengths.
  if (!timingSafeEqual(digest(given), digest(token))) return { ok: false, status: 401, message: "the metrics token is not valid" };
  return { ok: true };
}
