// Run as a separate OS process by plans.int.test.ts: reserves the requests of its plan in turn,
// `concurrency` at a time, either `count` of them or until `durationMs` has passed, then prints
// how many each caller was granted.
// Usage: tsx account-storm.fixture.ts <url> <plan as JSON>
//   plan: { requests: [{ endpoint, caller, amount }], count?, durationMs?, concurrency? }
import { openPostgres } from "@/db/client";
import { batcherFor, reserve } from "./reserve";
import { PATIENT } from "./test-fixtures";

type Plan = { requests: { endpoint: string; caller: string; amount: number }[]; count?: number; durationMs?: number; concurrency?: number };

async function main(): Promise<void> {
  const [url, planText] = process.argv.slice(2);
  if (!url || !planText) throw new Error("usage: <url> <plan as JSON>");
  const plan = JSON.parse(planText) as Plan;
  const database = openPostgres(url, { max: 6 });
  batcherFor(database.db, PATIENT);
  process.stdout.write("ready\n");
  await new Promise<void>((resolve) => process.stdin.once("data", () => resolve()));
  const granted: Record<string, number> = {};
  let unavailable = 0;
  let next = 0;
  const until = plan.durationMs === undefined ? Infinity : Date.now() + plan.durationMs;
  const more = () => (plan.count === undefined || next < plan.count) && Date.now() < until;
  const worker = async () => {
    while (more()) {
      const r = plan.requests[next % plan.requests.length];
      next += 1;
      if (!r) throw new Error("the plan names no request");
      const d = await reserve(database.db, r);
      if (d.status === "granted") granted[r.caller] = (granted[r.caller] ?? 0) + 1;
      if (d.status === "refused" && d.gate === "unavailable") unavailable += 1;
    }
  };
  await Promise.all(Array.from({ length: plan.concurrency ?? 40 }, worker));
  process.stdout.write(JSON.stringify({ granted, unavailable }) + "\n");
  await database.close();
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
