// Run as a separate OS process by budget.int.test.ts: reserves on several endpoints that share a
// budget, each request with parts drawn from a seeded generator, settles some to random actual
// parts no larger than reserved and releases others, then prints what it was granted.
// Usage: tsx budget-storm.fixture.ts <url> <plan as JSON>
//   plan: { endpoints: [{ key, parts: string[] }], count, seed, maxUnits?, uniform?: {endpoint, parts}[], settle?: boolean }
import { openPostgres } from "@/db/client";
import { batcherFor, reserve } from "./reserve";
import { releaseReservation, settleReservation } from "./resolve";
import { seededRandom } from "@/lib/demo/random";
import { PATIENT } from "./test-fixtures";

type Plan = {
  endpoints: { key: string; parts: string[] }[];
  count: number;
  seed: number;
  maxUnits?: number;
  /** Requests to send in turn instead of random ones. */
  uniform?: { endpoint: string; parts: Record<string, number> }[];
  settle?: boolean;
};

async function main(): Promise<void> {
  const [url, planText] = process.argv.slice(2);
  if (!url || !planText) throw new Error("usage: <url> <plan as JSON>");
  const plan = JSON.parse(planText) as Plan;
  const database = openPostgres(url, { max: 6 });
  batcherFor(database.db, PATIENT);
  const random = seededRandom(plan.seed).next;
  const request = (i: number) => {
    const uniform = plan.uniform?.[i % plan.uniform.length];
    if (uniform) return uniform;
    const e = plan.endpoints[Math.floor(random() * plan.endpoints.length)];
    if (!e) throw new Error("the plan names no endpoint");
    const parts: Record<string, number> = Object.fromEntries(e.parts.map((p) => [p, Math.floor(random() * (plan.maxUnits ?? 2000))]));
    const first = e.parts[0] ?? "units";
    if (Object.values(parts).every((n) => n === 0)) parts[first] = 1;
    return { endpoint: e.key, parts };
  };
  process.stdout.write("ready\n");
  await new Promise<void>((resolve) => process.stdin.once("data", () => resolve()));
  let granted = 0;
  let unavailable = 0;
  const one = async (i: number) => {
    const r = request(i);
    const d = await reserve(database.db, r);
    if (d.status === "refused" && d.gate === "unavailable") unavailable += 1;
    if (d.status !== "granted") return;
    granted += 1;
    if (!plan.settle) return;
    // Settle two in three with actual parts at most those reserved; release the third.
    if (random() < 2 / 3) {
      const actual = Object.fromEntries(Object.entries(r.parts).map(([p, n]) => [p, Math.floor(random() * (n + 1))]));
      await settleReservation(database.db, { reservationId: d.reservationId, parts: actual }, { deadlineMs: PATIENT.deadlineMs });
    } else {
      await releaseReservation(database.db, { reservationId: d.reservationId }, { deadlineMs: PATIENT.deadlineMs });
    }
  };
  await Promise.all(Array.from({ length: plan.count }, (_, i) => one(i)));
  process.stdout.write(JSON.stringify({ granted, unavailable }) + "\n");
  await database.close();
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
