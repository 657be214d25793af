import { z } from "zod";
import { getJson } from "../provider-http";
import type { ProviderDay, ReportedRow, UsageSource } from "../types";
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

// OpenAI's organization usage and costs APIs (an admin key, Bearer). Two reads per pull:
//   GET /v1/organization/usage/completions?bucket_width=1d&group_by=model  → rows per model and day,
//       one per usage field priced apart, no money: `input_tokens` counts cached and cache-write
//       tokens too, so input = input_tokens − input_cached_tokens − input_cache_write_tokens,
//       cached-input = input_cached_tokens, cache-write = input_cache_write_tokens, output =
//       output_tokens. Summing them into one count priced at one part is how a day with cached prompts was priced wrong.
//   GET /v1/organization/costs?bucket_width=1d&group_by=line_item          → one row per line item
//       and day: money = amount.value in amount.currency, no units.
// Both page with `page` = the previous `next_page` while `has_more`. `account` filters one project.

const PROVIDER = "OpenAI";

const UsageResult = z.looseObject({
  model: z.string().nullish(),
  input_tokens: z.number(),
  input_cached_tokens: z.number().nullish(),
  input_cache_write_tokens: z.number().nullish(),
  output_tokens: z.number(),
});
const CostResult = z.looseObject({
  line_item: z.string().nullish(),
  amount: z.looseObject({ value: z.union([z.number(), z.string()]), currency: z.string().nullish() }),
});
const page = <T extends z.ZodType>(result: T) =>
  z.looseObject({
    data: z.array(z.looseObject({ start_time: z.number(), end_time: z.number(), results: z.array(result) })),
    has_more: z.boolean(),
    next_page: z.string().nullish(),
  });
const UsagePage = page(UsageResult);
const CostPage = page(CostResult);

type Bucket<R> = { day: ProviderDay; start: number; result: R };

async function readAll<
  T extends z.ZodType<{ data: { start_time: number; end_time: number; results: unknown[] }[]; has_more: boolean; next_page?: string | null }>,
>(
  source: UsageSource,
  days: ProviderDay[],
  ctx: ProviderContext,
  path: string,
  groupBy: string,
  schema: T,
): Promise<Bucket<z.infer<T>["data"][number]["results"][number]>[]> {
  const { start, end, days: asked } = interval(days, source.timeZone);
  const http = httpOptions(PROVIDER, { authorization: `Bearer ${ctx.secret}` }, ctx, [ctx.secret]);
  const out: Bucket<z.infer<T>["data"][number]["results"][number]>[] = [];
  let cursor: string | null = null;
  const seen = new Set<string>();
  for (let n = 0; n < MAX_PAGES; n++) {
    const query = new URLSearchParams({
      start_time: String(start.getTime() / 1000),
      end_time: String(end.getTime() / 1000),
      bucket_width: "1d",
      group_by: groupBy,
      limit: "31",
    });
    if (source.account) query.set("project_ids", source.account);
    if (cursor) query.set("page", cursor);
    const body = await getJson(`${baseUrl(source, "openai")}${path}?${query.toString()}`, http);
    const parsed = schema.safeParse(body);
    if (!parsed.success) throw shapeError(PROVIDER, path, parsed.error.issues[0]);
    for (const bucket of parsed.data.data) {
      const day = bucketDay(new Date(bucket.start_time * 1000), source.timeZone, PROVIDER);
      // Rows outside the asked days (a provider rounding the range out) are not this pull's.
      if (!asked.has(day)) continue;
      for (const result of bucket.results) out.push({ day, start: bucket.start_time, result });
    }
    if (!parsed.data.has_more || !parsed.data.next_page) return out;
    if (seen.has(parsed.data.next_page)) throw shapeError(PROVIDER, `${path} (a next_page cursor repeated)`, undefined);
    seen.add(parsed.data.next_page);
    cursor = parsed.data.next_page;
  }
  throw shapeError(PROVIDER, `${path} (more than ${MAX_PAGES} pages)`, undefined);
}

/** What OpenAI reported for the days: token counts per model, money per line item. */
export async function pullOpenAI(source: UsageSource, days: ProviderDay[], ctx: ProviderContext): Promise<ReportedRow[]> {
  guardCredentialHost(source, "openai", ctx);
  const usage = await readAll(source, days, ctx, "/v1/organization/usage/completions", "model", UsagePage);
  const costs = await readAll(source, days, ctx, "/v1/organization/costs", "line_item", CostPage);
  const rows: ReportedRow[] = [];
  for (const { day, start, result } of usage) {
    const input = unitsOf(PROVIDER, "input_tokens", result.input_tokens);
    const cached = result.input_cached_tokens == null ? 0 : unitsOf(PROVIDER, "input_cached_tokens", result.input_cached_tokens);
    const written = result.input_cache_write_tokens == null ? 0 : unitsOf(PROVIDER, "input_cache_write_tokens", result.input_cache_write_tokens);
    // The parts are inside input_tokens: more parts than the whole is a shape we cannot price.
    if (cached + written > input)
      throw shapeError(PROVIDER, "usage/completions", {
        path: ["input_cached_tokens"],
        message: `cached (${cached}) and cache-write (${written}) tokens exceed input_tokens (${input})`,
      });
    const base = { day, item: result.model ?? "(no model)", costMicros: null, raw: { api: "usage/completions", bucket_start: start, ...result } };
    rows.push(
      ...fieldRows(base, [
        ["input", input - cached - written],
        ["cached-input", cached],
        ["cache-write", written],
        ["output", unitsOf(PROVIDER, "output_tokens", result.output_tokens)],
      ]),
    );
  }
  for (const { day, start, result } of costs) {
    const costMicros = moneyOf(PROVIDER, result.amount.value, result.amount.currency, source);
    rows.push({ day, item: result.line_item ?? "(no line item)", units: 0, costMicros, raw: { api: "costs", bucket_start: start, ...result } });
  }
  return rows;
}
