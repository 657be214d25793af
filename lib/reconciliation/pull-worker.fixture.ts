// Run as a separate OS process by pull-workers.int.test.ts: one worker's pullDueSources on its own
// pool, started when stdin closes (so all processes start together), printing who it pulled.
// Usage: <database url> <now ISO> <twilio auth token>
import { openPostgres } from "@/db/client";
import { pullDueSources } from "./pull";

async function main(): Promise<void> {
  const [url, now, token] = process.argv.slice(2);
  if (!url || !now || !token) throw new Error("usage: <url> <now> <token>");
  const database = openPostgres(url, { max: 2 });
  const go = new Promise<void>((resolve) => process.stdin.on("end", resolve));
  process.stdin.resume();
  process.stdout.write("ready\n");
  await go;
  const outcomes = await pullDueSources(database.db, {
    now: new Date(now),
    secrets: (name) => (name === "CEILINGS_SECRET_TWILIO" ? token : undefined),
    egress: { allowHosts: ["127.0.0.1"] },
  });
  process.stdout.write(
    `${JSON.stringify({ pulled: outcomes.filter((o) => o.ok).map((o) => o.name), failed: outcomes.filter((o) => !o.ok).map((o) => o.error) })}\n`,
  );
  await database.close();
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
