import { expect, test, type APIRequestContext } from "@playwright/test";
import { E2E_METRICS_TOKEN } from "../playwright.config";
import { adminCreatesKey } from "./pages/api-keys-page";

// /api/metrics of the production build: refused without the token, and its counters move with
// reservations made through the HTTP API (a separate route bundle of the same process).

async function scrape(request: APIRequestContext): Promise<string> {
  const response = await request.get("/api/metrics", { headers: { authorization: `Bearer ${E2E_METRICS_TOKEN}` } });
  expect(response.status()).toBe(200);
  return response.text();
}

function value(text: string, line: RegExp): number {
  const match = text.split("\n").find((l) => line.test(l));
  return match ? Number(match.slice(match.lastIndexOf(" ") + 1)) : 0;
}

test("the metrics route needs the token and counts grants and refusals by gate", async ({ page, request }) => {
  expect((await request.get("/api/metrics")).status()).toBe(401);
  expect((await request.get("/api/metrics", { headers: { authorization: "Bearer not-the-token-at-all" } })).status()).toBe(401);

  const secret = await adminCreatesKey(page, `metrics e2e ${Date.now()}`, "acct_metrics_e2e", ["llm.chat"]);
  const headers = { authorization: `Bearer ${secret}` };

  const granted = /^ceilings_reservations_granted_total\{.*endpoint="llm\.chat"/;
  const perCallMax = /^ceilings_reservations_refused_total\{(?=.*endpoint="llm\.chat")(?=.*gate="per_call_max")/;
  const before = await scrape(request);
  for (let i = 0; i < 3; i++) {
    const r = await request.post("/api/v1/reservations", { headers, data: { endpoint: "llm.chat", amount: 10 } });
    expect(r.status()).toBe(201);
    await request.post(`/api/v1/reservations/${String(((await r.json()) as { reservationId: string }).reservationId)}/release`, { headers });
  }
  expect((await request.post("/api/v1/reservations", { headers, data: { endpoint: "llm.chat", amount: 8001 } })).status()).toBe(429);
  const after = await scrape(request);
  expect(value(after, granted) - value(before, granted)).toBe(3);
  expect(value(after, perCallMax) - value(before, perCallMax)).toBe(1);
  expect(after).toContain("ceilings_reserve_batch_duration_seconds_bucket");
  expect(after).toMatch(/ceilings_db_connections\{[^}]*state="active"/);
});
