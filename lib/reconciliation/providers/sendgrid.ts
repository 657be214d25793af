import { z } from "zod";
import { getJson } from "../provider-http";
import type { ProviderDay, ReportedRow, UsageSource } from "../types";
import { baseUrl, guardCredentialHost, httpOptions, interval, MAX_PAGES, requireZone, shapeError, unitsOf, type ProviderContext } from "./common";

// SendGrid's global email statistics (an API key with stats.read, Bearer):
//   GET /v3/stats?start_date=&end_date=&aggregated_by=day&limit=&offset= → [{ date, stats: [{ metrics }] }]
// one entry per day from start_date to end_date, in order, its metrics summed over the parent
// account (or the subuser named as the source's account, sent as the on-behalf-of header). The
// endpoint takes no time zone (its reference names start_date, end_date, aggregated_by, limit and
// offset only) and names none for its days: they are read as UTC days, and a source counting
// another zone's days is refused (requireZone) rather than compared over other intervals.
// SendGrid bills every recipient of a send request, whatever becomes of the email (a bounce or a
// drop still counts, SendGrid's support says), which is `requests` ("the number of emails you
// requested to send"), not `processed` (those it went on to handle) nor `delivered`: units =
// requests, item "requests". No money: the count is priced at the endpoint's part.

const PROVIDER = "SendGrid";
const PAGE = 100;

const Day = z.looseObject({
  date: z.string().regex(/^\d{4}-\d{2}-\d{2}$/, "not a YYYY-MM-DD day"),
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
  let previous = "";
  // A page may hold fewer entries than asked (the server caps limit): the days run in order, one
  // entry each, so the pages end with the last day asked for, or with an empty page. A page that
  // repeats or goes back (an offset not honoured) is refused, never counted twice nor followed forever.
  for (let n = 0, offset = 0; n < MAX_PAGES; n++) {
    const query = new URLSearchParams({ start_date: sorted[0] ?? "", end_date: last, aggregated_by: "day", limit: String(PAGE), offset: String(offset) });
    const parsed = Page.safeParse(await getJson(`${baseUrl(source, "sendgrid")}/v3/stats?${query.toString()}`, http));
    if (!parsed.success) throw shapeError(PROVIDER, "/v3/stats", parsed.error.issues[0]);
    offset += parsed.data.length;
    for (const [i, entry] of parsed.data.entries()) {
      if (entry.date <= previous)
        throw shapeError(PROVIDER, "/v3/stats", { path: [i, "date"], message: `${entry.date} after ${previous}: the days are not once each in order` });
      previous = entry.date;
      if (!asked.has(entry.date)) continue;
      const units = entry.stats.reduce((sum, s, j) => sum + unitsOf(PROVIDER, `stats[${j}].metrics.requests`, s.metrics.requests), 0);
      rows.push({ day: entry.date, item: "requests", units, costMicros: null, unit: "emails", raw: { api: "v3/stats", ...entry } });
    }
    if (parsed.data.length === 0 || previous >= last) return rows;
  }
  throw shapeError(PROVIDER, `/v3/stats (more than ${MAX_PAGES} pages)`, undefined);
}
