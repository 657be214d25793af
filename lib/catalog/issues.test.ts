import { describe, expect, it } from "vitest";
import { FormReader, readCeilingRows, readEndpointFields } from "@/app/(dashboard)/endpoints/catalog-form";
import type { Db } from "@/db/client";
import { reserve } from "@/lib/enforcement/reserve";
import { InputError, issueLine } from "@/lib/limits/errors";
import { parseCatalogText } from "./file";
import { describeIssues, EndpointSpec, type EndpointSpecInput, NEEDS_GLOBAL_HINT } from "./spec";

// No error message says its prefix twice: "name: name is required", "ceilings[2].value: value is
// required", "Needs at least one global ceiling: an endpoint needs at least one global ceiling".
// Every line the catalog's schemas, the catalog file, the dashboard's form reader and the
// library's reserve build is held to one oracle, over a table of bad inputs.

const words = (s: string) =>
  s
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, " ")
    .trim();

/** True when a line says its prefix again after the colon: as its first words, or (a phrase) anywhere. */
function repeatsItsPrefix(line: string): boolean {
  for (let at = line.indexOf(": "); at >= 0; at = line.indexOf(": ", at + 2)) {
    const prefix = line.slice(0, at).split(/; |\n/).pop() ?? "";
    const rest = words(line.slice(at + 2));
    const last = words(
      prefix
        .split(/[.\s]/)
        .pop()
        ?.replace(/\[\d+\]/g, "") ?? "",
    );
    if (last !== "" && (rest === last || rest.startsWith(`${last} `))) return true;
    const phrase = words(prefix);
    if (phrase.split(" ").length >= 3 && rest.includes(phrase)) return true;
  }
  return false;
}

const ceiling = { metric: "units", scope: "global", window: "utc_day", value: 5, min: 0, max: 10, default: 5 } as const;
const spec = (patch: Record<string, unknown> = {}): EndpointSpecInput =>
  ({
    key: "sms.otp",
    name: "OTP",
    unit: "messages",
    parts: [{ name: "units", price: "0.0079" }],
    perCallMax: 1,
    ceilings: [ceiling],
    ...patch,
  }) as EndpointSpecInput;

const BAD_SPECS: Record<string, unknown>[] = [
  { key: "" },
  { key: "SMS otp" },
  { name: "" },
  { name: "x".repeat(200) },
  { unit: "a\u0000" },
  { parts: [{ name: "units", price: "-1" }] },
  {
    parts: [
      { name: "units", price: "0.5abc" },
      { name: "units", price: "1e9" },
    ],
  },
  {
    parts: [
      { name: "Input", price: "" },
      { name: "output", price: 0.5 },
    ],
  },
  { parts: [] },
  { parts: [{ name: "units", price: "0.0000000000001" }] },
  { currency: "dollars" },
  { billingDay: 29 },
  { perCallMax: 0 },
  { planAllowance: "many" },
  { throttlePerMinute: 0 },
  { throttleFailOpen: "yes" },
  { archived: 1 },
  { colour: "red" },
  { ceilings: "none" },
  { ceilings: [] },
  { ceilings: [{ ...ceiling, scope: "caller" }] },
  { ceilings: [ceiling, ceiling] },
  { ceilings: [{ ...ceiling, min: 9, max: 3 }] },
  { ceilings: [{ ...ceiling, default: 50 }] },
  { ceilings: [{ ...ceiling, value: 500 }] },
  { ceilings: [{ ...ceiling, value: -1 }] },
  { ceilings: [{ ...ceiling, metric: "dollars", window: "weekly", scope: "planet" }] },
  { ceilings: [{ ...ceiling, windowSeconds: 60, destinationKind: "phone" }] },
  { ceilings: [ceiling, { ...ceiling, scope: "destination", window: "first_hit" }] },
  { ceilings: [ceiling, { ...ceiling, scope: "caller", window: "first_hit", windowSeconds: 0 }] },
  { ceilings: [{ ...ceiling, alertThresholds: [50, 50, 120] }] },
  { ceilings: [{ ...ceiling, killed: "no" }] },
  { overrides: [{ metric: "units", window: "utc_day", caller: "", value: -1, reason: "" }] },
];

const BAD_FORMS: Record<string, string>[] = [
  {},
  { name: "", unit: "", parts: "", billingDay: "", perCallMax: "", planAllowance: "1e9", throttlePerMinute: "-5" },
  {
    parts: JSON.stringify([
      { name: "units", price: "500abc" },
      { name: "units", price: "" },
    ]),
    billingDay: "0.5",
    perCallMax: "x".repeat(80),
  },
  { parts: "[]" },
  { parts: "not json" },
  { ceilings: "not json" },
  {
    ceilings: JSON.stringify([
      { metric: "units", scope: "global", window: "first_hit", windowSeconds: "", value: "", min: "", max: "", default: "", alertThresholds: "50, x, 100%" },
    ]),
  },
];

function formLines(fields: Record<string, string>): string[] {
  const r = new FormReader(fields);
  try {
    r.done({ ...readEndpointFields(r), ceilings: readCeilingRows(r, r.text("ceilings")) });
  } catch (error) {
    if (error instanceof InputError) return [...error.message.split("; "), ...error.issues];
    throw error;
  }
  return [];
}

describe("issueLine joins a path and a message once", () => {
  it.each([
    ["name", "name is required", "name is required"],
    ["ceilings[2].value", "value is required: type a whole number such as 100", "ceilings[2].value is required: type a whole number such as 100"],
    ["unitPriceMicros", "unit price (micros) must be 0 or more", "unit price (micros) must be 0 or more"],
    ["parts[1].price", "price must be 0 or more, got '-1'", "parts[1].price must be 0 or more, got '-1'"],
    ["parts[0].name", "part name is required", "parts[0].name: part name is required"],
    [
      "endpoints[1].ceilings[0].windowSeconds",
      "windowSeconds is only for a cooldown (window first_hit)",
      "endpoints[1].ceilings[0].windowSeconds is only for a cooldown (window first_hit)",
    ],
    ["endpoints[2].billingDay", "billing day must be 28 or less", "endpoints[2]: billing day must be 28 or less"],
    ["ceilings", "an endpoint needs at least one global ceiling", "ceilings: an endpoint needs at least one global ceiling"],
    ["ceilings[0].windowSeconds", "cooldown seconds is required", "ceilings[0].windowSeconds: cooldown seconds is required"],
    ["ceilings[0].alertThresholds[1]", "threshold must be at most 100", "ceilings[0].alertThresholds[1]: threshold must be at most 100"],
    ["name", "names must be short", "name: names must be short"],
    ["", 'Unrecognized key: "colour"', 'Unrecognized key: "colour"'],
  ])("%s + %s", (path, message, line) => {
    expect(issueLine({ path, message })).toBe(line);
    expect(repeatsItsPrefix(line)).toBe(false);
  });

  it("the oracle sees what the old joins said", () => {
    for (const line of [
      "name: name is required",
      "ceilings[2].value: value is required: type a whole number",
      `Needs at least one global ceiling: ${"an endpoint needs at least one global ceiling: without one"}`,
      "amount: amount must be positive",
    ]) {
      expect(repeatsItsPrefix(line), line).toBe(true);
    }
  });
});

describe("no error message repeats its prefix", () => {
  it("in the catalog's schemas", () => {
    const lines = BAD_SPECS.flatMap((patch) => {
      const parsed = EndpointSpec.safeParse(spec(patch));
      expect(parsed.success, JSON.stringify(patch)).toBe(false);
      return parsed.success ? [] : describeIssues(parsed.error);
    });
    expect(lines.length).toBeGreaterThan(BAD_SPECS.length);
    expect(lines.filter(repeatsItsPrefix)).toEqual([]);
  });

  it("in a catalog file", () => {
    const files = [
      { version: 2, endpoints: [] },
      { version: 1, endpoints: [spec(), spec()] },
      { version: 1, endpoints: BAD_SPECS.map(spec) },
    ];
    const lines = files.flatMap((f) => {
      const parsed = parseCatalogText(JSON.stringify(f));
      return parsed.ok ? [] : parsed.errors;
    });
    expect(lines.length).toBeGreaterThan(BAD_SPECS.length);
    expect(lines.filter(repeatsItsPrefix)).toEqual([]);
  });

  it("in the dashboard's catalog forms, the message and each line", () => {
    const lines = BAD_FORMS.flatMap(formLines);
    expect(lines.length).toBeGreaterThan(BAD_FORMS.length);
    expect(lines.filter(repeatsItsPrefix)).toEqual([]);
  });

  it("in the library's reserve", async () => {
    const lines: string[] = [];
    for (const params of [
      { endpoint: "", amount: 1 },
      { endpoint: "e", amount: 1.5 },
      { endpoint: "e", amount: -1 },
      { endpoint: "e", amount: 1, ttlSeconds: 0 },
      { endpoint: "e", amount: 1, caller: "" },
    ]) {
      // Parsed before anything touches the database.
      const error = await reserve({} as Db, params).then(
        () => null,
        (e: unknown) => e,
      );
      lines.push(error instanceof Error ? error.message : "no error");
    }
    expect(lines.filter((l) => l === "no error")).toEqual([]);
    expect(lines.filter(repeatsItsPrefix)).toEqual([]);
  });

  it("in the new-endpoint form's hint", () => {
    expect(NEEDS_GLOBAL_HINT).toMatch(/^An endpoint needs at least one global ceiling: without one/);
    expect(repeatsItsPrefix(NEEDS_GLOBAL_HINT)).toBe(false);
  });
});
