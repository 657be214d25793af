import { FilterForm, FilterInput, FilterSelect } from "@/components/filter-form";
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

export function RefusalsFilters({ values, endpointKeys }: Props) {
  return (
    <FilterForm action="/refusals" label="Filter refusals" columns="lg:grid-cols-7">
      <FilterSelect name="endpoint" label="Endpoint" value={values.endpoint} options={endpointKeys} />
      <FilterSelect name="gate" label="Gate" value={values.gate} options={GATES} />
      <FilterInput name="caller" label="Caller (account)" value={values.caller} placeholder="acct_…, exact" />
      <FilterInput name="destination" label="Destination starts with" value={values.destination} placeholder="maria@ or +1415" />
      <FilterInput name="from" label="From (UTC)" type="datetime-local" value={localValue(values.from)} />
      <FilterInput name="to" label="Before (UTC)" type="datetime-local" value={localValue(values.to)} />
    </FilterForm>
  );
}
