// Run as a separate OS process by processes.int.test.ts: fires `count` concurrent reservations at
// one endpoint and prints how many were granted. Usage: tsx reserve-storm.fixture.ts <url> <endpoint> <count> <amount>
import { openPostgres } from "@/db/client";
import { batcherFor, reserve } from "./reserve";
import { PATIENT } from "./test-fixtures";

async function main(): Promise<void> {
  const [url, endpoint, count, amount] = process.argv.slice(2);
  if (!url || !endpoint || !count || !amount) throw new Error("usage: <url> <endpoint> <count> <amount>");
  const database = openPostgres(url, { max: 6 });
  batcherFor(database.db, PATIENT);
  // Say ready, then wait for the go signal on stdin so every process starts firing at once.
  process.stdout.write("ready\n");
  await new Promise<void>((resolve) => process.stdin.once("data", () => resolve()));
  const decisions = await Promise.all(Array.from({ length: Number(count) }, () => reserve(database.db, { endpoint, amount: Number(amount) })));
  const granted = decisions.filter((d) => d.status === "granted").length;
  const unavailable = decisions.filter((d) => d.status === "refused" && d.gate === "unavailable").length;
  process.stdout.write(JSON.stringify({ granted, unavailable }) + "\n");
  await database.close();
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
