import { prepareDatabaseWithDemo } from "@/lib/demo";

// npm run -s db:url: the connection URL of the database the app uses, on stdout alone, for
// `psql "$(npm run -s db:url)"` and services in other languages. Without DATABASE_URL it is the
// embedded server, started (and migrated, seeded) if no process runs it, and left running.

async function main(): Promise<void> {
  // Anything the start-up prints goes to stderr: stdout carries the URL only.
  console.log = (...args: unknown[]) => console.error(...args);
  const { url, embedded } = await prepareDatabaseWithDemo();
  if (embedded?.startedHere) console.error("db:url: started the embedded database; it stays up (npm run db:stop stops it)");
  process.stdout.write(`${url}\n`);
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(`db:url failed: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  },
);
