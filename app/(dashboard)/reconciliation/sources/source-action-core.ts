import { InputError } from "@/lib/errors";
import { z } from "zod";
import { OptionalReason } from "@/app/_lib/action-fields";
import { type ActionContext, type ActionCore, type ActionResult, defineAction } from "@/app/_lib/define-action";
import { rejectedForm } from "@/app/_lib/rejected-input";
import {
  addUsageRule,
  createUsageSource,
  deleteUsageSource,
  removeUsageRule,
  requestPull,
  setUsageSourceEnabled,
  updateUsageSource,
} from "@/lib/reconciliation/sources";
import { formatDateTime } from "@/lib/format";
import { decimalId } from "@/lib/http/strict-input";
import { importUsageFile } from "@/lib/reconciliation/pull";
import { compareSourceDaysDetailed } from "@/lib/reconciliation/compare";
import { ReconciliationError } from "@/lib/reconciliation/errors";
import { usageFields } from "@/lib/reconciliation/types";
import { type Issue } from "@/lib/limits/errors";
import { logError } from "@/lib/log/redact";

// The usage sources' server actions. Admins connect, edit, pause, delete sources, set their rules
// and import files; operators (and admins) ask for a pull now, as they may kill and restore.
// Settings are read by lib/reconciliation (one reader for the form and the CLI): each bad field
// comes back next to its field, and a refused input is audited as usage_source.rejected.

const SourceId = decimalId("source");
const sourcePath = (id: number) => `/reconciliation/sources/${id}`;
const pages = (id: number) => ["/reconciliation", sourcePath(id)];

const SETTINGS = [
  "name",
  "kind",
  "location",
  "credentialRef",
  "account",
  "timeZone",
  "currency",
  "lookbackDays",
  "thresholdPercent",
  "thresholdMoney",
  "unmappedMoney",
  "pullAt",
] as const;

/** The settings fields as typed, for lib to read (and refuse field by field); the id read strictly. */
function settingsOf(fields: Record<string, string>): Record<string, string | undefined> {
  return Object.fromEntries(SETTINGS.map((k) => [k, fields[k]]));
}

function sourceIdOf(fields: Record<string, string>): number {
  const parsed = SourceId.safeParse(fields.sourceId);
  if (!parsed.success)
    throw new InputError(
      [{ path: "sourceId", message: "source must be a whole number written in digits" }],
      parsed.error.issues[0]?.message ?? "source must be a whole number",
    );
  return parsed.data;
}

export const createUsageSourceCore = defineAction({
  role: "admin",
  boundary: "usage_source.create",
  rejected: "usage_source.rejected",
  input: (fields) => ({ settings: settingsOf(fields) }),
  run: async ({ actor, db }, input) => {
    const s = await createUsageSource(db, { input: input.settings, actor });
    return {
      message: `Connected ${s.name}. Add rules to map its items to endpoints; the worker pulls it within a few seconds and then daily.`,
      revalidate: ["/reconciliation"],
      redirectTo: sourcePath(s.id),
    };
  },
});

export const updateUsageSourceCore = defineAction({
  role: "admin",
  boundary: "usage_source.update",
  rejected: "usage_source.rejected",
  input: (fields) => ({ sourceId: sourceIdOf(fields), expectedVersion: (fields.version ?? "").slice(0, 40), settings: settingsOf(fields) }),
  run: async ({ actor, db }, input) => {
    const { source, changes } = await updateUsageSource(db, { sourceId: input.sourceId, expectedVersion: input.expectedVersion, input: input.settings, actor });
    return { message: `Saved ${source.name}: ${changes.map((c) => c.field).join(", ")} changed. The next pull uses them.`, revalidate: pages(source.id) };
  },
});

export const deleteUsageSourceCore = defineAction({
  role: "admin",
  boundary: "usage_source.delete",
  input: z.object({ sourceId: SourceId, reason: OptionalReason }),
  run: async ({ actor, db }, input) => {
    const r = await deleteUsageSource(db, { sourceId: input.sourceId, actor, reason: input.reason });
    return { message: `Deleted ${r.name} with its rules, ${r.days} pulled days and their comparisons.`, revalidate: ["/"], redirectTo: "/reconciliation" };
  },
});

const enabledCore = (enabled: boolean) =>
  defineAction({
    role: "admin",
    boundary: enabled ? "usage_source.resume" : "usage_source.pause",
    input: z.object({ sourceId: SourceId }),
    run: async ({ actor, db }, input) => {
      const s = await setUsageSourceEnabled(db, { sourceId: input.sourceId, enabled, actor });
      return {
        message: enabled ? `${s.name} runs again: the worker pulls it when due.` : `${s.name} is paused: not pulled; its days and comparisons stay.`,
        revalidate: pages(s.id),
      };
    },
  });

export const pauseUsageSourceCore = enabledCore(false);
export const resumeUsageSourceCore = enabledCore(true);

export const requestPullCore = defineAction({
  role: "operator",
  boundary: "usage_source.pull",
  input: z.object({ sourceId: SourceId }),
  run: async ({ actor, db }, input) => {
    const r = await requestPull(db, { sourceId: input.sourceId, actor });
    return {
      message: `Pull requested at ${formatDateTime(r.requestedAt, { seconds: true })} (the worker pulls within a few seconds).`,
      revalidate: pages(r.source.id),
    };
  },
});

/** "endpoint:llm.gpt-4o" or "budget:llm.daily", as the add-rule form's select sends it. */
const Target = z
  .string({ error: "choose an endpoint or a budget" })
  .max(80, "that target is too long")
  .transform((s) => {
    const [kind = "", ...rest] = s.split(":");
    const key = rest.join(":");
    return { endpointKey: kind === "endpoint" ? key : "", budgetKey: kind === "budget" ? key : "" };
  });

export const addUsageRuleCore = defineAction({
  role: "admin",
  boundary: "usage_rule.add",
  rejected: "usage_source.rejected",
  input: z.object({
    sourceId: SourceId,
    match: z.string({ error: "match is required" }).max(400, "match must be at most 200 characters"),
    target: Target,
    part: z.string().max(40, "part must be at most 32 characters").optional(),
    // One select per usage field (part_input, part_cache-read...): blank keeps the default.
    ...Object.fromEntries(usageFields.map((f) => [`part_${f}`, z.string().max(40, "part must be at most 32 characters").optional()])),
  }),
  run: async ({ actor, db }, input) => {
    const fields = input as Record<string, unknown>;
    const fieldParts = Object.fromEntries(
      usageFields.flatMap((f) => (typeof fields[`part_${f}`] === "string" && fields[`part_${f}`] !== "" ? [[f, String(fields[`part_${f}`])]] : [])),
    );
    const r = await addUsageRule(db, { sourceId: input.sourceId, match: input.match, ...input.target, part: input.part, fieldParts, actor });
    return {
      message: `Mapped '${r.match}' to ${r.targetKind} ${r.targetKey}${r.part ? ` (priced at ${r.part})` : ""}. Rows already pulled keep their mapping until their day is pulled again.`,
      revalidate: pages(input.sourceId),
    };
  },
});

export const removeUsageRuleCore = defineAction({
  role: "admin",
  boundary: "usage_rule.remove",
  input: z.object({ sourceId: SourceId, ruleId: decimalId("rule") }),
  run: async ({ actor, db }, input) => {
    const r = await removeUsageRule(db, { ...input, actor });
    return { message: `Removed the rule '${r.match}' of ${r.source}: its items count as unmapped from the next pull.`, revalidate: pages(input.sourceId) };
  },
});

// ---- import ---------------------------------------------------------------------------------

/** The dashboard takes what fits one request (next.config.js: 4 MB); bigger files go through the CLI. */
export const MAX_IMPORT_CHARS = 3_900_000;
/** Bad lines listed on the page; the count says how many more there are. */
export const MAX_LISTED_LINES = 1000;

const ImportFields = z.object({ sourceId: SourceId, format: z.enum(["", "csv", "json"], { error: "format must be csv or json" }).optional() });

/** csv or json as chosen, else as the text looks: JSON opens with [ or {. */
export function formatOf(chosen: "" | "csv" | "json" | undefined, text: string): "csv" | "json" {
  if (chosen === "csv" || chosen === "json") return chosen;
  return /^\s*[[{]/.test(text) ? "json" : "csv";
}

/** Every bad line as a problem of its own (`line 3`), its reasons joined, in line order. */
export function badFileError(lines: readonly { line: number; reason: string }[]): InputError {
  const byLine = new Map<number, string[]>();
  for (const { line, reason } of lines) byLine.set(line, [...(byLine.get(line) ?? []), reason]);
  const sorted = [...byLine.entries()].sort(([a], [b]) => a - b);
  // Line 0 is the file as a whole (no rows, too large).
  const problems: Issue[] = sorted
    .slice(0, MAX_LISTED_LINES)
    .map(([line, reasons]) => ({ path: line === 0 ? "file" : `line ${line}`, message: reasons.join("; ") }));
  const more = sorted.length - problems.length;
  if (more > 0) problems.push({ path: "lines", message: `and ${more} more bad line${more === 1 ? "" : "s"} not listed here` });
  const bad = sorted.filter(([line]) => line !== 0).length;
  const count = bad === 0 ? "the file as a whole" : `${bad} bad line${bad === 1 ? "" : "s"}`;
  return new InputError(problems, `The file was not imported (${count}; nothing was written). Fix what is listed below and import it again.`);
}

async function runImport({ actor, db }: ActionContext, input: z.output<typeof ImportFields>, text: string): Promise<ActionResult> {
  if (text.trim() === "")
    throw new InputError(
      [{ path: "text", message: "the file is empty: choose a file or paste its rows" }],
      "the file is empty: choose a file or paste its rows",
    );
  if (text.length > MAX_IMPORT_CHARS) {
    const message = `the file is too large for the dashboard (${text.length} characters, at most ${MAX_IMPORT_CHARS}): import it with npm run ceilings -- usage import`;
    throw new InputError([{ path: "text", message }], message);
  }
  const now = new Date();
  let result: Awaited<ReturnType<typeof importUsageFile>>;
  try {
    result = await importUsageFile(db, input.sourceId, text, { actor, now, format: formatOf(input.format, text) });
  } catch (error) {
    if (error instanceof ReconciliationError && error.code === "bad_file") throw badFileError(error.lines);
    throw error;
  }
  const imported = `Imported ${result.rows} row${result.rows === 1 ? "" : "s"} over ${result.days.length} day${result.days.length === 1 ? "" : "s"} (${result.unmapped} unmapped${result.notes ? `: ${result.notes.join("; ")}` : ""})`;
  try {
    const { rows: compared, notOver } = await compareSourceDaysDetailed(db, { sourceId: input.sourceId, days: result.days, now });
    // A day not over yet in the source's zone (today, or a later day) is stored, not compared.
    const later =
      notOver.length === 0
        ? ""
        : `; ${notOver.join(", ")} ${notOver.length === 1 ? "is" : "are"} not over yet: stored, and compared once over (import the file again then)`;
    return {
      message: `${imported}; compared ${compared.length} target-day${compared.length === 1 ? "" : "s"} with what Ceilings charged${later}.`,
      revalidate: ["/"],
    };
  } catch (error) {
    // The import is committed: say so, and that the comparison is what failed.
    logError("comparison after a usage import failed", error);
    return { message: `${imported}. The comparison could not run (the error was logged): import the file again to compare.`, revalidate: ["/"] };
  }
}

/**
 * Import a file's rows (pasted, or read from a file by the browser into the form). The file's text
 * is taken out of the form before the common boundary, which caps fields at 10,000 characters
 * and refuses control characters: a file may be megabytes long, and its bad characters are named
 * line by line by the file's own parser instead of refusing the form as a whole.
 */
export const importUsageFileCore: ActionCore<"usage_source.import"> = Object.assign(
  async (deps: Parameters<ActionCore>[0], formData: FormData) => {
    if (!(formData instanceof FormData)) return rejectedForm("the action takes a form");
    const texts = formData.getAll("text");
    if (texts.length > 1) return rejectedForm("text was sent more than once");
    const [text = ""] = texts;
    if (typeof text !== "string") return rejectedForm("text must be the file's text, not a file");
    const rest = new FormData();
    for (const [name, value] of formData.entries()) if (name !== "text") rest.append(name, value);
    const core = defineAction({
      role: "admin",
      boundary: "usage_source.import",
      rejected: "usage_source.rejected",
      input: ImportFields,
      run: (ctx, input) => runImport(ctx, input, text),
    });
    return core(deps, rest);
  },
  { boundary: "usage_source.import" as const },
);
