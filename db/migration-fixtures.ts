import { execFileSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { migrationsFolder } from "./client";

// For tests of a migration that moves data: the schema and the SQL functions as they were before
// it, so a database can be filled the way the code of that day filled it, then migrated.

/** A copy of the migrations folder holding every migration before `tag`, and its journal cut there. */
export function migrationsBefore(tag: string): string {
  const folder = mkdtempSync(path.join(tmpdir(), "ceilings-migrations-before-"));
  cpSync(migrationsFolder, folder, { recursive: true });
  const journalFile = path.join(folder, "meta", "_journal.json");
  const journal = JSON.parse(readFileSync(journalFile, "utf8")) as { entries: { idx: number; tag: string }[] };
  const cut = journal.entries.findIndex((e) => e.tag === tag);
  if (cut < 0) throw new Error(`no ${tag} in the journal`);
  for (const e of journal.entries.slice(cut)) rmSync(path.join(folder, `${e.tag}.sql`));
  journal.entries = journal.entries.slice(0, cut);
  writeFileSync(journalFile, JSON.stringify(journal));
  return folder;
}

/**
 * db/functions/ as it was at `commit`, from the repository's history, in a temporary folder. A
 * clone without that history cannot run the test: it fails saying so, never skips.
 */
export function functionsAt(commit: string): string {
  const git = (...args: string[]) => execFileSync("git", args, { cwd: process.cwd(), encoding: "utf8", maxBuffer: 64 << 20 });
  let names: string[];
  try {
    names = git("ls-tree", "--name-only", commit, "db/functions/")
      .split("\n")
      .filter((n) => n.endsWith(".sql"));
  } catch (e) {
    throw new Error(`db/functions/ at ${commit} is not in this clone's history (a shallow clone?): ${(e as Error).message}`);
  }
  if (names.length === 0) throw new Error(`no db/functions/ at ${commit}`);
  const folder = mkdtempSync(path.join(tmpdir(), "ceilings-functions-at-"));
  mkdirSync(folder, { recursive: true });
  for (const name of names) writeFileSync(path.join(folder, path.basename(name)), git("show", `${commit}:${name}`));
  return folder;
}
