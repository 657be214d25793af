// Run as a separate OS process by concurrency.int.test.ts: keeps 16 batched reservations in flight
// at one endpoint until stdin closes, then prints what it was told. Usage: <url> <endpoint>
import { openPostgres } from "@/db/client";
import { batcherFor, reserve } from "@/lib/enforcement/reserve";
import { PATIENT } from "@/lib/enforcement/test-fixtures";

async function main(): Promise<void> {
  const [url, endpoint] = process.argv.slice(2);
  if (!url || !endpoint) throw new Error("usage: <url> <endpoint>");
  const database = openPostgres(url, { max: 4 });
  batcherFor(database.db, PATIENT);
  let stop = false;
  process.stdin.on("end", () => (stop = true));
  process.stdin.resume();
  const told: Record<string, number> = {};
  const one = async () => {
    try {
      const d = await reserve(database.db, { endpoint, amount: 1, caller: `acct_${Math.floor(Math.random() * 4)}` });
      const what = d.status === "granted" ? "granted" : d.status === "refused" ? `refused:${d.gate}` : `resolved:${d.state}`;
      told[what] = (told[what] ?? 0) + 1;
    } catch (error) {
      const code = error instanceof Error && "code" in error ? String(error.code) : "throw";
      told[`error:${code}`] = (told[`error:${code}`] ?? 0) + 1;
    }
  };
  process.stdout.write("ready\n");
  while (!stop) await Promise.all(Array.from({ length: 16 }, one));
  process.stdout.write(`${JSON.stringify(told)}\n`);
  await database.close();
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
