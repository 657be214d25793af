// npm run db:functions -- <name>: writes a new migration that recreates the SQL functions from
// db/functions/, when they differ from the newest such migration. `--check` only says whether
// one is needed (exit 1 if so), for CI.
import { functionsMigrationSql, generateFunctionsMigration, latestFunctionsMigration } from "@/db/functions-migration";

const args = process.argv.slice(2);
if (args.includes("--check")) {
  const latest = latestFunctionsMigration();
  if (latest?.sql === functionsMigrationSql()) {
    console.log(`db/functions/ matches ${latest.tag}`);
  } else {
    console.error("db/functions/ changed since the last generated migration: run npm run db:functions -- <name>");
    process.exitCode = 1;
  }
} else {
  const name = args[0] ?? "functions";
  if (!/^[a-z0-9_]+$/.test(name)) throw new Error(`the migration name must be snake_case, got '${name}'`);
  const tag = generateFunctionsMigration(name);
  console.log(tag ? `wrote db/migrations/${tag}.sql` : "db/functions/ matches the newest generated migration: nothing to do");
}
