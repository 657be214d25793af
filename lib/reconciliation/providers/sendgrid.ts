import { z } from "zod";
import { getJson } from "../provider-http";
import type { ProviderDay, ReportedRow, UsageSource } from "../types";
import { baseUrl, guardCredentialHost, httpOptions, interval, MAX_PAGES, requireZone, shapeError, unitsOf, type ProviderContext } from "./common";

// SendGrid's global email statistics (an API key with stats.read, Bearer):
//   GET /v3/stats?start_date=&end_date=&aggregated_by=day&limit=&offset= → one entry per UTC day,
//       its metrics summed over the account (or the subuser named as the source's account, sent as
//       the on-behalf-of header).
// SendGrid bills by emails sent, and an email counts once it is requested, whatever becomes of it
// (a bounce or a block still counts), so units = `requests`, item "requests". No money: the count
// is priced at the endpoint's part. Paged with limit/offset, one entry per day in order.

const PROVIDER = "SendGrid";
const PAGE = 100;

const Day = z.looseObject({
  date: z.string(),
  stats: z.array(z.looseObject({ metrics: z.looseObject({ requests: z.union([z.number(), z.string()]) }) })),
});
const Page = z.array(Day);

/** What SendGrid reported for the days: emails requested per UTC day. */
export async function pullSendGrid(source: UsageSource, days: ProviderDay[], ctx: ProviderContext): Promise<ReportedRow[]> {
  requireZone(source, "UTC", PROVIDER, "statistics");
  guardCredentialHost(source, "sendgrid", ctx);
  const { days: asked } = interval(days, source.timeZone);
  const sorted = [...asked].sort();
  const headers: Record<string, string> = { authorization: `Bearer ${ctx.secret}` };
  if (source.account) headers["on-behalf-of"] = source.account;
  const http = httpOptions(PROVIDER, headers, ctx, [ctx.secret]);
  const rows: ReportedRow[] = [];
  const last = sorted[sorted.length - 1] ?? "";
  // A page may hold fewer entries than asked (the server caps limit): the days run in order, one
  // entry each, so the pages end with the last day asked for, or with an empty page.
  for (let n = 0, offset = 0; n < MAX_PAGES; n++) {
    const query = new URLSearchParams({ start_date: sorted[0] ?? "", end_date: last, aggregated_by: "day", limit: String(PAGE), offset: String(offset) });
    const parsed = Page.safeParse(await getJson(`${baseUrl(source, "sendgrid")}/v3/stats?${query.toString()}`, http));
    if (!parsed.success) throw shapeError(PROVIDER, "/v3/stats", parsed.error.issues[0]);
    offset += parsed.data.length;
    for (const entry of parsed.data) {
      if (!asked.has(entry.date)) continue;
      const units = entry.stats.reduce((sum, s, i) => sum + unitsOf(PROVIDER, `stats[${i}].metrics.requests`, s.metrics.requests), 0);
      rows.push({ day: entry.date, item: "requests", units, costMicros: null, unit: "emails", raw: { api: "v3/stats", ...entry } });
    }
    if (parsed.data.length === 0 || parsed.data.some((entry) => entry.date >= last)) return rows;
  }
  throw shapeError(PROVIDER, `/v3/stats (more than ${MAX_PAGES} pages)`, undefined);
}
