// Run as a separate OS process by compare.int.test.ts: compares one source's days `times` times at
// once on its own pool when stdin closes, so two processes race on the same rows and alerts.
// Usage: <url> <sourceId> <day,day> <times>
import { openPostgres } from "@/db/client";
import { compareSourceDays } from "./compare";

async function main(): Promise<void> {
  const [url, sourceId, days, times] = process.argv.slice(2);
  if (!url || !sourceId || !days || !times) throw new Error("usage: <url> <sourceId> <day,day> <times>");
  const database = openPostgres(url, { max: 4 });
  const go = new Promise<void>((resolve) => process.stdin.on("end", resolve));
  process.stdin.resume();
  process.stdout.write("ready\n");
  await go;
  const now = new Date("2026-11-14T12:00:00Z");
  const results = await Promise.allSettled(
    Array.from({ length: Number(times) }, () => compareSourceDays(database.db, { sourceId: Number(sourceId), days: days.split(","), now })),
  );
  const rows = results.reduce((n, r) => n + (r.status === "fulfilled" ? r.value.length : 0), 0);
  const errors = results.flatMap((r) => (r.status === "rejected" ? [String(r.reason)] : []));
  process.stdout.write(`${JSON.stringify({ rows, errors })}\n`);
  await database.close();
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
