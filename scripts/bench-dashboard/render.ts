import { randomBytes } from "node:crypto";
import { eq } from "drizzle-orm";
import { encode } from "next-auth/jwt";
import type { Db } from "@/db/client";
import { staff } from "@/db/schema";
import { hashPassword } from "@/lib/auth/password";
import { env } from "@/lib/env";

// The page is timed as staff see it: a full server render by a running server, signed in. The
// session cookie is minted with the server's NEXTAUTH_SECRET for a viewer account whose password
// is random and never shown, so the account cannot be used to sign in by hand.

const BENCH_EMAIL = "bench-viewer@ceilings.local";
const COOKIE = "next-auth.session-token";

async function benchViewer(db: Db): Promise<{ id: number; email: string; sessionVersion: number }> {
  const [existing] = await db.select().from(staff).where(eq(staff.email, BENCH_EMAIL)).limit(1);
  if (existing) return { id: existing.id, email: existing.email, sessionVersion: existing.sessionVersion };
  const passwordHash = await hashPassword(randomBytes(24).toString("base64url"), 10);
  const [row] = await db.insert(staff).values({ email: BENCH_EMAIL, name: "Benchmark viewer", passwordHash, role: "viewer" }).returning();
  if (!row) throw new Error("could not create the benchmark viewer");
  return { id: row.id, email: row.email, sessionVersion: row.sessionVersion };
}

function median(ms: number[]): number {
  const s = [...ms].sort((a, b) => a - b);
  return s[Math.floor((s.length - 1) / 2)] ?? 0;
}

function p95(ms: number[]): number {
  const s = [...ms].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil(0.95 * s.length) - 1)] ?? 0;
}

/** Fetches /refusals views as a signed-in viewer; returns summary lines. */
export async function renderPage(db: Db, baseUrl: string, runs: number): Promise<string[]> {
  const secret = env().NEXTAUTH_SECRET;
  if (!secret) throw new Error("NEXTAUTH_SECRET must be set to the server's secret to sign the session cookie");
  const viewer = await benchViewer(db);
  const token = await encode({ secret, token: { sub: String(viewer.id), email: viewer.email, staffId: viewer.id, sv: viewer.sessionVersion } });
  const paths = ["/refusals", "/refusals?gate=unavailable", "/refusals?destination=maria.1"];
  const lines: string[] = [];
  for (const path of paths) {
    const ms: number[] = [];
    let bytes = 0;
    for (let i = 0; i <= runs; i += 1) {
      const start = performance.now();
      const response = await fetch(new URL(path, baseUrl), { headers: { cookie: `${COOKIE}=${token}` }, redirect: "manual" });
      const body = await response.text();
      const elapsed = performance.now() - start;
      if (response.status !== 200) throw new Error(`GET ${path} answered ${response.status}: is the server on this DATABASE_URL and NEXTAUTH_SECRET?`);
      if (!body.includes('data-testid="refusals-count"')) throw new Error(`GET ${path} did not render the refusal page`);
      bytes = body.length;
      if (i > 0) ms.push(elapsed); // the first request warms the route
    }
    const label = `render: ${path}`;
    lines.push(`${label.padEnd(48)} median ${median(ms).toFixed(1).padStart(7)} ms  p95 ${p95(ms).toFixed(1).padStart(7)} ms  ${p95(ms) <= 300 ? "ok" : "OVER 300 ms"} (${Math.round(bytes / 1024)} KiB)`);
  }
  return lines;
}
