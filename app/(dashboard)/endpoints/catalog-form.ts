import { type Issue, invalidInput } from "@/lib/limits/errors";
import { parseLimitInput } from "@/lib/limits/parse";
import { zodIssues } from "@/lib/limits/errors";
import { type CeilingSpecInput, type EndpointFieldsInput, PartList, type PartSpecInput } from "@/lib/catalog/spec";
import { MAX_PARTS } from "@/lib/vocabulary";

// Reads the catalog forms. Every number is typed by a person, so only plain whole numbers pass, by
// the rule ceiling values follow ("1e9", "500abc", "0.5", "-5" are errors naming their field); all
// problems are reported at once.
// The ceilings of the new-endpoint form, and the priced parts of both endpoint forms, arrive as one
// JSON field each of text rows built by the form.

const MAX_CEILING_ROWS = 20;

export class FormReader {
  readonly issues: Issue[] = [];
  constructor(private readonly fields: Record<string, string>) {}

  text(name: string): string {
    return this.fields[name] ?? "";
  }

  /** A whole number by the one rule ceiling values follow (lib/limits/parse), or the issue recorded. */
  whole(name: string, label: string, raw = this.text(name)): number | undefined {
    const parsed = parseLimitInput(raw, label);
    if (parsed.ok) return parsed.value;
    // The message echoes what was typed; a long paste is shown by its first 40 characters.
    const text = raw.trim();
    this.issues.push({ path: name, message: text.length > 40 ? parsed.error.replace(text, `${text.slice(0, 40)}…`) : parsed.error });
    return undefined;
  }

  /** "50, 80, 100" (or "50/80/100%") as percentages; empty is none. */
  thresholds(name: string, raw = this.text(name)): number[] {
    const text = raw.trim();
    if (text === "") return [];
    return text.split(/[\s,/]+/).map((t, i) => this.whole(name, `alert threshold ${i + 1}`, t.replace(/%$/, "")) ?? Number.NaN);
  }

  /** Empty means none (null); anything else must be a whole number. */
  optionalWhole(name: string, label: string, raw = this.text(name)): number | null | undefined {
    return raw.trim() === "" ? null : this.whole(name, label, raw);
  }

  /** Throws every issue collected, or returns the value built from the form. */
  done<T>(value: T): T {
    if (this.issues.length > 0) throw invalidInput(this.issues);
    return value;
  }
}

export function readEndpointFields(r: FormReader): EndpointFieldsInput {
  // Whole numbers that failed to read are left as NaN: the issue is already recorded.
  const n = (v: number | undefined) => v ?? Number.NaN;
  return {
    name: r.text("name"),
    unit: r.text("unit"),
    parts: readPartRows(r, r.text("parts")),
    currency: r.text("currency").trim() || "USD",
    planAllowance: r.optionalWhole("planAllowance", "plan allowance") ?? null,
    billingDay: n(r.whole("billingDay", "billing day")),
    perCallMax: n(r.whole("perCallMax", "per-call max")),
    throttlePerMinute: r.optionalWhole("throttlePerMinute", "throttle per minute") ?? null,
    throttleFailOpen: r.text("throttleFailOpen") === "on",
  };
}

type CeilingRow = Record<string, unknown>;

/** The priced parts as typed (`[{ name, price }]`), checked by the catalog's own rules so every problem shows at once. */
export function readPartRows(r: FormReader, raw: string): PartSpecInput[] {
  let rows: unknown;
  try {
    rows = JSON.parse(raw || "[]");
  } catch {
    r.issues.push({ path: "parts", message: "the priced parts could not be read; reload the page" });
    return [];
  }
  if (!Array.isArray(rows) || rows.length > MAX_PARTS * 4 || !rows.every((x): x is CeilingRow => typeof x === "object" && x !== null && !Array.isArray(x))) {
    r.issues.push({ path: "parts", message: `at most ${MAX_PARTS} parts, each a row of the form` });
    return [];
  }
  const parts = rows.map((row) => ({ name: rowText(row, "name").trim(), price: rowText(row, "price").trim() }));
  const parsed = PartList.safeParse(parts);
  if (!parsed.success)
    r.issues.push(
      ...zodIssues(parsed.error).map((i) => ({ path: i.path === "" ? "parts" : `parts${i.path.startsWith("[") ? "" : "."}${i.path}`, message: i.message })),
    );
  return parts;
}

function rowText(row: CeilingRow, key: string): string {
  const v = row[key];
  return typeof v === "string" ? v : typeof v === "number" ? String(v) : "";
}

/** One ceiling from text fields named `${prefix}metric`, `${prefix}value`, ... */
export function readCeiling(r: FormReader, row: CeilingRow, path: string): CeilingSpecInput {
  const n = (v: number | undefined) => v ?? Number.NaN;
  const window = rowText(row, "window");
  const scope = rowText(row, "scope");
  return {
    metric: rowText(row, "metric") as CeilingSpecInput["metric"],
    scope: scope as CeilingSpecInput["scope"],
    window: window as CeilingSpecInput["window"],
    ...(window === "first_hit" ? { windowSeconds: n(r.whole(`${path}.windowSeconds`, "cooldown seconds", rowText(row, "windowSeconds"))) } : {}),
    ...(scope === "destination" && rowText(row, "destinationKind")
      ? { destinationKind: rowText(row, "destinationKind") as CeilingSpecInput["destinationKind"] }
      : {}),
    value: n(r.whole(`${path}.value`, "value", rowText(row, "value"))),
    min: n(r.whole(`${path}.min`, "min", rowText(row, "min"))),
    max: n(r.whole(`${path}.max`, "max", rowText(row, "max"))),
    default: n(r.whole(`${path}.default`, "default", rowText(row, "default"))),
    alertThresholds: r.thresholds(`${path}.alertThresholds`, rowText(row, "alertThresholds")),
  };
}

export function readCeilingRows(r: FormReader, raw: string): CeilingSpecInput[] {
  let rows: unknown;
  try {
    rows = JSON.parse(raw || "[]");
  } catch {
    r.issues.push({ path: "ceilings", message: "the ceilings could not be read; reload the page" });
    return [];
  }
  if (!Array.isArray(rows) || rows.length > MAX_CEILING_ROWS || !rows.every((x): x is CeilingRow => typeof x === "object" && x !== null && !Array.isArray(x))) {
    r.issues.push({ path: "ceilings", message: `at most ${MAX_CEILING_ROWS} ceilings, each a row of the form` });
    return [];
  }
  return rows.map((row, i) => readCeiling(r, row, `ceilings[${i}]`));
}
