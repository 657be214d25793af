// `npm run ceilings -- usage ...`: usage sources from the command line, through the same
// lib/reconciliation verbs as the worker and the dashboard (an import is audited with the
// operating-system user). A pull or an import is compared at once, so the drift is there to read.
import { readFile } from "node:fs/promises";
import { parseArgs } from "node:util";
import { asc, eq } from "drizzle-orm";
import type { Db } from "@/db/client";
import { usageSources } from "@/db/schema";
import type { AuditActor } from "@/lib/audit/record";
import { formatCount } from "@/lib/format";
import { dayBounds } from "@/lib/reconciliation/days";
import { ReconciliationError } from "@/lib/reconciliation/errors";
import { MAX_FILE_BYTES, type UsageFileFormat } from "@/lib/reconciliation/file";
import { importUsageFile, pullSourceNow, type PullOptions } from "@/lib/reconciliation/pull";
import { recordCompareFailure } from "@/lib/reconciliation/run";
import type { ProviderDay, PullResult, ReconciliationDay, UsageSource } from "@/lib/reconciliation/types";

export const USAGE_SOURCES_USAGE = `  usage sources                        every usage source: kind, zone, last pull and its error
  usage pull <source>                  pull the source now (its provider's last complete days, or
                                       its file's location), then compare those days
  usage import <source> <file> [--format csv|json]
                                       import a usage file into a file source, whole or not at
                                       all (every bad line listed), then compare its days`;

export class UsageCliError extends Error {}

export type UsageCommand = { verb: "sources" } | { verb: "pull"; source: string } | { verb: "import"; source: string; file: string; format?: UsageFileFormat };

/** Compares a source's days (compareSourceDays of lib/reconciliation/compare), passed in by the caller. */
export type CompareDays = (db: Db, p: { sourceId: number; days: ProviderDay[]; now: Date }) => Promise<ReconciliationDay[]>;

export type UsageDeps = Omit<PullOptions, "now"> & { actor: AuditActor; now?: () => Date; compare: CompareDays; out?: (line: string) => void };

/** Reads `usage ...` (the words after `usage`); every mistake is a usage error naming it. */
export function parseUsageArgs(argv: string[]): UsageCommand {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, allowPositionals: true, options: { format: { type: "string" } } });
  } catch (error) {
    throw new UsageCliError(error instanceof Error ? error.message : String(error));
  }
  const { positionals, values } = parsed;
  const [verb = "sources", source, file, ...rest] = positionals;
  if (rest.length > 0) throw new UsageCliError(`unexpected arguments: ${rest.join(" ")}`);
  if (values.format !== undefined && verb !== "import") throw new UsageCliError("--format is an option of usage import");
  switch (verb) {
    case "sources":
      if (source) throw new UsageCliError("usage sources takes no argument");
      return { verb };
    case "pull":
      if (!source) throw new UsageCliError("usage pull needs a source (its name or #id)");
      if (file) throw new UsageCliError(`unexpected arguments: ${file}`);
      return { verb, source };
    case "import": {
      if (!source || !file) throw new UsageCliError("usage import needs a source and a file: usage import <source> <file>");
      if (values.format !== undefined && values.format !== "csv" && values.format !== "json")
        throw new UsageCliError(`--format must be csv or json, got '${values.format}'`);
      return { verb, source, file, ...(values.format ? { format: values.format } : {}) };
    }
    default:
      throw new UsageCliError(`unknown usage command '${verb}'`);
  }
}

/** A source by its name, or by `#12` / `12`. */
async function findSource(db: Db, ref: string): Promise<UsageSource> {
  const id = /^#?(\d+)$/.exec(ref)?.[1];
  const [byName] = await db.select().from(usageSources).where(eq(usageSources.name, ref));
  const [byId] =
    !byName && id
      ? await db
          .select()
          .from(usageSources)
          .where(eq(usageSources.id, Number(id)))
      : [];
  const found = byName ?? byId;
  if (!found) throw new ReconciliationError("not_found", `no usage source named '${ref}' (see: npm run ceilings -- usage sources)`);
  return found;
}

const when = (d: Date | null) => (d ? `${d.toISOString().replace("T", " ").slice(0, 16)} UTC` : "never");

function describeResult(name: string, r: PullResult, compared: ReconciliationDay[]): string {
  const span =
    r.days.length === 0 ? "no days" : r.days.length === 1 ? `1 day (${r.days[0]})` : `${r.days.length} days (${r.days[0]} to ${r.days[r.days.length - 1]})`;
  const unmapped = r.unmapped > 0 ? `, ${formatCount(r.unmapped)} no rule maps (map them on the source's page)` : "";
  const notes = r.notes && r.notes.length > 0 ? ` (${r.notes.join("; ")})` : "";
  return `${name}: ${span}, ${formatCount(r.rows)} row${r.rows === 1 ? "" : "s"}${unmapped}${notes}; compared ${formatCount(compared.length)} endpoint or budget days`;
}

export async function runUsage(db: Db, cmd: UsageCommand, deps: UsageDeps): Promise<void> {
  const out = deps.out ?? console.log;
  const now = deps.now ?? (() => new Date());
  switch (cmd.verb) {
    case "sources": {
      const sources = await db.select().from(usageSources).orderBy(asc(usageSources.name));
      if (sources.length === 0) out("no usage sources yet: add one on the Reconciliation page");
      for (const s of sources) {
        const state = s.enabled ? "" : "  [paused]";
        const requested = s.pullRequestedAt ? `, pull requested ${when(s.pullRequestedAt)}` : "";
        out(
          `#${s.id} ${s.name}  ${s.kind}, days in ${s.timeZone}, ${s.currency}${state}  last pull ${when(s.lastPullAt)}, last good ${when(s.lastPullOk)}${requested}`,
        );
        if (s.lastPullError) out(`    error: ${s.lastPullError}`);
      }
      return;
    }
    case "pull": {
      const source = await findSource(db, cmd.source);
      const at = now();
      const result = await pullSourceNow(db, source.id, { ...deps, now: at });
      let compared: Awaited<ReturnType<typeof deps.compare>>;
      try {
        compared = await deps.compare(db, { sourceId: source.id, days: result.days, now: at });
      } catch (error) {
        await recordCompareFailure(db, source.id, error);
        throw error;
      }
      out(`pulled ${describeResult(source.name, result, compared)}`);
      return;
    }
    case "import": {
      const source = await findSource(db, cmd.source);
      let text: string;
      try {
        text = await readFile(cmd.file, "utf8");
      } catch (error) {
        throw new UsageCliError(`cannot read ${cmd.file}: ${error instanceof Error && "code" in error ? String(error.code) : "unreadable"}`);
      }
      if (Buffer.byteLength(text) > MAX_FILE_BYTES) throw new UsageCliError(`${cmd.file} is larger than 5 MB`);
      const format = cmd.format ?? (/\.json$/i.test(cmd.file) ? "json" : /\.csv$/i.test(cmd.file) ? "csv" : undefined);
      const at = now();
      const result = await importUsageFile(db, source.id, text, { actor: deps.actor, now: at, ...(format ? { format } : {}) });
      const compared = await deps.compare(db, { sourceId: source.id, days: result.days, now: at });
      out(`imported ${describeResult(source.name, result, compared)}`);
      // A file may hold today (or a later day): stored, but compared only once the day is over.
      const notOver = result.days.filter((d) => dayBounds(d, source.timeZone).end.getTime() > at.getTime());
      if (notOver.length > 0)
        out(
          `  ${notOver.join(", ")} ${notOver.length === 1 ? "is" : "are"} not over yet in ${source.timeZone}: stored, and compared once over (import the file again then)`,
        );
      return;
    }
  }
}

/** A refused pull or import as the lines to print: the sentence, then each bad line of a file. */
export function describeUsageError(error: ReconciliationError): string[] {
  return [`error: ${error.message}`, ...error.lines.map((l) => (l.line > 0 ? `  line ${l.line}: ${l.reason}` : `  ${l.reason}`))];
}
