import Link from "next/link";
import { buttonClass, inputClass, labelClass, secondaryButtonClass } from "@/components/ui";
import { GATES } from "@/lib/vocabulary";

type Props = {
  /** The values as they were typed, so a rejected filter can be corrected in place. */
  values: Record<string, string>;
  endpointKeys: string[];
};

// <input type="datetime-local"> wants "YYYY-MM-DDTHH:MM"; links may carry full ISO instants.
function localValue(v: string | undefined): string {
  if (!v) return "";
  const match = /^(\d{4}-\d\d-\d\dT\d\d:\d\d)/.exec(v);
  return match?.[1] ?? v;
}

/** A plain GET form: it works before hydration and every filtered view is a shareable link. */
export function RefusalsFilters({ values, endpointKeys }: Props) {
  return (
    <form
      method="get"
      action="/refusals"
      aria-label="Filter refusals"
      className="grid gap-3 rounded-lg border border-zinc-200 p-4 sm:grid-cols-2 lg:grid-cols-7 dark:border-zinc-800"
    >
      <div>
        <label htmlFor="f-endpoint" className={labelClass}>Endpoint</label>
        <select id="f-endpoint" name="endpoint" defaultValue={values.endpoint ?? ""} className={inputClass}>
          <option value="">All</option>
          {endpointKeys.map((k) => <option key={k} value={k}>{k}</option>)}
        </select>
      </div>
      <div>
        <label htmlFor="f-gate" className={labelClass}>Gate</label>
        <select id="f-gate" name="gate" defaultValue={values.gate ?? ""} className={inputClass}>
          <option value="">All</option>
          {GATES.map((g) => <option key={g} value={g}>{g}</option>)}
        </select>
      </div>
      <div>
        <label htmlFor="f-caller" className={labelClass}>Caller (account)</label>
        <input id="f-caller" name="caller" defaultValue={values.caller ?? ""} placeholder="acct_…, exact" className={inputClass} />
      </div>
      <div>
        <label htmlFor="f-destination" className={labelClass}>Destination starts with</label>
        <input id="f-destination" name="destination" defaultValue={values.destination ?? ""} placeholder="maria@ or +1415" className={inputClass} />
      </div>
      <div>
        <label htmlFor="f-from" className={labelClass}>From (UTC)</label>
        <input id="f-from" name="from" type="datetime-local" defaultValue={localValue(values.from)} className={inputClass} />
      </div>
      <div>
        <label htmlFor="f-to" className={labelClass}>Before (UTC)</label>
        <input id="f-to" name="to" type="datetime-local" defaultValue={localValue(values.to)} className={inputClass} />
      </div>
      <div className="flex items-end gap-2">
        <button type="submit" className={buttonClass}>Filter</button>
        <Link href="/refusals" className={secondaryButtonClass}>Clear</Link>
      </div>
    </form>
  );
}
