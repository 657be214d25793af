import Link from "next/link";
import type { ReactNode } from "react";
import { buttonClass, inputClass, labelClass, secondaryButtonClass } from "./ui";

// The filters above a log (audit, refusals): a plain GET form, so it works before hydration and
// every filtered view is a link to share. A field's id is `f-<name>`.

export function FilterForm({ action, label, columns, children }: { action: string; label: string; columns: string; children: ReactNode }) {
  return (
    <form
      method="get"
      action={action}
      aria-label={label}
      className={`grid gap-3 rounded-lg border border-zinc-200 p-4 sm:grid-cols-2 ${columns} dark:border-zinc-800`}
    >
      {children}
      <div className="flex items-end gap-2">
        <button type="submit" className={buttonClass}>
          Filter
        </button>
        <Link href={action} className={secondaryButtonClass}>
          Clear
        </Link>
      </div>
    </form>
  );
}

/** A choice among known values, or All; an option is its value, or a value shown under another label. */
export function FilterSelect(props: {
  name: string;
  label: string;
  value: string | undefined;
  options: readonly (string | { value: string; label: string })[];
}) {
  return (
    <div>
      <label htmlFor={`f-${props.name}`} className={labelClass}>
        {props.label}
      </label>
      <select id={`f-${props.name}`} name={props.name} defaultValue={props.value ?? ""} className={inputClass}>
        <option value="">All</option>
        {props.options.map((o) => {
          const { value, label } = typeof o === "string" ? { value: o, label: o } : o;
          return (
            <option key={`${value}|${label}`} value={value}>
              {label}
            </option>
          );
        })}
      </select>
    </div>
  );
}

export function FilterInput(props: { name: string; label: string; value: string | undefined; type?: "text" | "datetime-local"; placeholder?: string }) {
  return (
    <div>
      <label htmlFor={`f-${props.name}`} className={labelClass}>
        {props.label}
      </label>
      <input
        id={`f-${props.name}`}
        name={props.name}
        type={props.type ?? "text"}
        defaultValue={props.value ?? ""}
        placeholder={props.placeholder}
        className={inputClass}
      />
    </div>
  );
}
