import { rmSync } from "node:fs";
import { ensureEmbeddedServer, stopEmbeddedServer } from "@/db/embedded/server";

// The throwaway server of a test run without TEST_DATABASE_URL (scripts/test.sh):
//   start <dir>   initialises and starts an embedded server in <dir>; prints its URL
//   stop <dir>    stops it and deletes <dir>

async function main([command, dir]: string[]): Promise<void> {
  if (!dir || (command !== "start" && command !== "stop")) throw new Error("usage: test-database.ts start|stop <dir>");
  if (command === "start") {
    // Start-up messages go to stderr: stdout carries the URL only.
    console.log = (...args: unknown[]) => console.error(...args);
    const server = await ensureEmbeddedServer(dir);
    process.stdout.write(`${server.url.replace(/\/[^/]*$/, "/postgres")}\n`);
    return;
  }
  await stopEmbeddedServer(dir);
  rmSync(dir, { recursive: true, force: true });
}

main(process.argv.slice(2)).then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(`test-database: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  },
);
