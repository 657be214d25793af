import { FormReader } from "@/app/(dashboard)/endpoints/catalog-form";
import { parseMoneyInput } from "@/lib/limits/parse";
import type { BudgetFieldsInput, BudgetSpecInput } from "@/lib/budgets/spec";

// Reads the budget forms. Money is typed in the currency's units ("200", "200.00", "1.5") and
// read into whole micros by one rule (lib/budgets/money.ts): "1e9", "500abc", "-5" and an empty
// field are errors naming their field; every problem is reported at once.

export class BudgetFormReader extends FormReader {
  /** An amount of money into micros, or the issue recorded (NaN then, so zod adds nothing more). */
  money(name: string, label: string): number {
    const raw = this.text(name);
    const parsed = parseMoneyInput(raw, label);
    if (parsed.ok) return parsed.micros;
    const text = raw.trim();
    this.issues.push({ path: name, message: text.length > 40 ? parsed.error.replace(text, `${text.slice(0, 40)}…`) : parsed.error });
    return Number.NaN;
  }

  /** The members, sent as one field of endpoint keys separated by commas, spaces or lines. */
  members(name = "members"): string[] {
    return this.text(name)
      .split(/[\s,]+/)
      .filter((k) => k !== "");
  }
}

export function readBudgetFields(r: BudgetFormReader): BudgetFieldsInput {
  return {
    name: r.text("name"),
    members: r.members(),
    min: r.money("min", "min"),
    max: r.money("max", "max"),
    default: r.money("default", "default"),
    alertThresholds: r.thresholds("alertThresholds"),
  };
}

export function readBudgetSpec(r: BudgetFormReader): BudgetSpecInput {
  const billingDay = r.text("billingDay").trim() === "" ? 1 : (r.whole("billingDay", "billing day") ?? Number.NaN);
  return {
    ...readBudgetFields(r),
    key: r.text("key").trim(),
    currency: r.text("currency").trim() || "USD",
    scope: r.text("scope") as BudgetSpecInput["scope"],
    window: r.text("window") as BudgetSpecInput["window"],
    billingDay,
    value: r.money("value", "value"),
  };
}
