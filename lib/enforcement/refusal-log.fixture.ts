// A second process for refusal-log.int.test.ts: 12 parts requests at once over a connection whose
// lock timeout is short, against an endpoint whose counter row the test holds; they start when the
// test writes a line. Prints how many were refused `unavailable` once their refusals are logged.
// Usage: tsx refusal-log.fixture.ts <url> <endpoint key> <caller tag>
import { openPostgres } from "@/db/client";
import { reserve } from "./reserve";

async function main(): Promise<void> {
  const [url = "", endpoint = "", tag = ""] = process.argv.slice(2);
  const bounded = openPostgres(url, { max: 4, connection: { lock_timeout: 300, statement_timeout: 1_500 } });
  process.stdout.write("ready\n");
  await new Promise<void>((resolve) => process.stdin.once("data", () => resolve()));
  const decisions = await Promise.all(
    Array.from({ length: 12 }, (_, i) =>
      reserve(bounded.db, { endpoint, parts: { input: 100, output: 600 }, caller: `acct_${tag}${i % 3}`, requestId: `${tag}-${i}` }),
    ),
  );
  // The log is written after the answer (asynchronously): give it time before closing.
  await new Promise((r) => setTimeout(r, 1_500));
  process.stdout.write(`${JSON.stringify({ unavailable: decisions.filter((d) => d.status === "refused" && d.gate === "unavailable").length })}\n`);
  await bounded.close();
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
