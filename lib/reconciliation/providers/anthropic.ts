import { z } from "zod";
import { getJson } from "../provider-http";
import type { ProviderDay, ReportedRow, UsageField, UsageSource } from "../types";
import {
  baseUrl,
  bucketDay,
  fieldRows,
  guardCredentialHost,
  httpOptions,
  interval,
  MAX_PAGES,
  moneyOf,
  shapeError,
  unitsOf,
  type ProviderContext,
} from "./common";

// Anthropic's Admin API usage and cost reports (an admin key in x-api-key, anthropic-version):
//   GET /v1/organizations/usage_report/messages?bucket_width=1d&group_by[]=model → rows per model
//       and day, one per usage field priced apart: input (uncached_input_tokens), cache-read,
//       cache-write (5-minute writes), cache-write-1h, output;
//   GET /v1/organizations/cost_report?group_by[]=description → one row per cost description and day:
//       `amount` is CENTS as a decimal string ("123.45" is $1.2345). Grouped by description, a row
//       names its `model` ("Claude Sonnet 4 Usage - Input Tokens" is claude-sonnet-4-...): the row's
//       item is that model, so the rule that maps a model's tokens maps its money too. A row with
//       no model (web search, code execution) keeps its description.
// Both page with `page` = the previous `next_page` while `has_more`. `account` filters one
// workspace (the cost report has no such filter: it is grouped by workspace and filtered here).

const PROVIDER = "Anthropic";
export const ANTHROPIC_VERSION = "2023-06-01";

const count = z.union([z.number(), z.string()]).nullish();
const UsageResult = z.looseObject({
  model: z.string().nullish(),
  workspace_id: z.string().nullish(),
  uncached_input_tokens: count,
  cache_read_input_tokens: count,
  cache_creation: z.looseObject({ ephemeral_1h_input_tokens: count, ephemeral_5m_input_tokens: count }).nullish(),
  output_tokens: count,
});
const CostResult = z.looseObject({
  description: z.string().nullish(),
  model: z.string().nullish(),
  cost_type: z.string().nullish(),
  token_type: z.string().nullish(),
  workspace_id: z.string().nullish(),
  amount: z.union([z.string(), z.number()]),
  currency: z.string().nullish(),
});
const page = <T extends z.ZodType>(result: T) =>
  z.looseObject({
    data: z.array(z.looseObject({ starting_at: z.string(), ending_at: z.string(), results: z.array(result) })),
    has_more: z.boolean(),
    next_page: z.string().nullish(),
  });
const UsagePage = page(UsageResult);
const CostPage = page(CostResult);

type Bucket<R> = { day: ProviderDay; startingAt: string; result: R };

async function readAll<T extends z.ZodType<{ data: { starting_at: string; results: unknown[] }[]; has_more: boolean; next_page?: string | null }>>(
  source: UsageSource,
  days: ProviderDay[],
  ctx: ProviderContext,
  path: string,
  groupBy: string[],
  schema: T,
): Promise<Bucket<z.infer<T>["data"][number]["results"][number]>[]> {
  const { start, end, days: asked } = interval(days, source.timeZone);
  const http = httpOptions(PROVIDER, { "x-api-key": ctx.secret, "anthropic-version": ANTHROPIC_VERSION }, ctx, [ctx.secret]);
  const out: Bucket<z.infer<T>["data"][number]["results"][number]>[] = [];
  let cursor: string | null = null;
  const seen = new Set<string>();
  for (let n = 0; n < MAX_PAGES; n++) {
    const query = new URLSearchParams({ starting_at: start.toISOString(), ending_at: end.toISOString(), bucket_width: "1d", limit: "31" });
    for (const g of groupBy) query.append("group_by[]", g);
    if (source.account && path.includes("usage_report")) query.append("workspace_ids[]", source.account);
    if (cursor) query.set("page", cursor);
    const body = await getJson(`${baseUrl(source, "anthropic")}${path}?${query.toString()}`, http);
    const parsed = schema.safeParse(body);
    if (!parsed.success) throw shapeError(PROVIDER, path, parsed.error.issues[0]);
    for (const bucket of parsed.data.data) {
      const day = bucketDay(new Date(bucket.starting_at), source.timeZone, PROVIDER);
      if (!asked.has(day)) continue;
      for (const result of bucket.results) out.push({ day, startingAt: bucket.starting_at, result });
    }
    if (!parsed.data.has_more || !parsed.data.next_page) return out;
    if (seen.has(parsed.data.next_page)) throw shapeError(PROVIDER, `${path} (a next_page cursor repeated)`, undefined);
    seen.add(parsed.data.next_page);
    cursor = parsed.data.next_page;
  }
  throw shapeError(PROVIDER, `${path} (more than ${MAX_PAGES} pages)`, undefined);
}

const tokens = (field: string, v: number | string | null | undefined) => (v === null || v === undefined ? 0 : unitsOf(PROVIDER, field, v));

/** The usage field a cost row's token_type names, so its money shows beside the tokens it prices. */
function costField(tokenType: string): UsageField | undefined {
  const fields: Record<string, UsageField> = {
    uncached_input_tokens: "input",
    output_tokens: "output",
    cache_read_input_tokens: "cache-read",
    "cache_creation.ephemeral_5m_input_tokens": "cache-write",
    "cache_creation.ephemeral_1h_input_tokens": "cache-write-1h",
  };
  return Object.hasOwn(fields, tokenType) ? fields[tokenType] : undefined;
}

/** What Anthropic reported for the days: token counts per model, money per cost description. */
export async function pullAnthropic(source: UsageSource, days: ProviderDay[], ctx: ProviderContext): Promise<ReportedRow[]> {
  guardCredentialHost(source, "anthropic", ctx);
  const usage = await readAll(source, days, ctx, "/v1/organizations/usage_report/messages", ["model"], UsagePage);
  const costs = await readAll(source, days, ctx, "/v1/organizations/cost_report", source.account ? ["description", "workspace_id"] : ["description"], CostPage);
  const rows: ReportedRow[] = [];
  for (const { day, startingAt, result: r } of usage) {
    const base = { day, item: r.model ?? "(no model)", costMicros: null, raw: { api: "usage_report/messages", starting_at: startingAt, ...r } };
    rows.push(
      ...fieldRows(base, [
        ["input", tokens("uncached_input_tokens", r.uncached_input_tokens)],
        ["cache-read", tokens("cache_read_input_tokens", r.cache_read_input_tokens)],
        ["cache-write", tokens("cache_creation.ephemeral_5m_input_tokens", r.cache_creation?.ephemeral_5m_input_tokens)],
        ["cache-write-1h", tokens("cache_creation.ephemeral_1h_input_tokens", r.cache_creation?.ephemeral_1h_input_tokens)],
        ["output", tokens("output_tokens", r.output_tokens)],
      ]),
    );
  }
  for (const { day, startingAt, result: r } of costs) {
    if (source.account && r.workspace_id !== source.account) continue;
    const costMicros = moneyOf(PROVIDER, r.amount, r.currency, source, -2);
    const field = r.token_type ? costField(r.token_type) : undefined;
    rows.push({
      day,
      item: r.model || r.description || r.cost_type || "(no description)",
      units: 0,
      costMicros,
      ...(field ? { field } : {}),
      raw: { api: "cost_report", starting_at: startingAt, ...r },
    });
  }
  return rows;
}
