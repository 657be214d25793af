import { z } from "zod";
import { POSTMARK_ZONE } from "../source-input";
import { getJson } from "../provider-http";
import type { ProviderDay, ReportedRow, UsageSource } from "../types";
import { baseUrl, guardCredentialHost, httpOptions, interval, requireZone, shapeError, unitsOf, type ProviderContext } from "./common";

// Postmark's outbound statistics (a server API token in X-Postmark-Server-Token):
//   GET /stats/outbound/sends?fromdate=&todate=[&messagestream=|&tag=] → { Sent, Days: [{ Date, Sent }] }
// the days with mail between the dates (both inclusive), in US Eastern time ("All stats use EST
// timezone", Postmark's Stats API reference), read as America/New_York, its daylight saving
// included. Postmark bills each email it sends, bounced or not: units = Sent.
// No money: the count is priced at the endpoint's part. Which mail is counted is the source's
// account: blank, every stream of the server (what Postmark counts without a messagestream), item
// "Sent"; a message stream id, that stream, item the stream id ("outbound", "broadcast");
// "tag:NAME", the mail sent with that tag, item "tag:NAME".

const PROVIDER = "Postmark";
const TAG_PREFIX = "tag:";

const Sends = z.looseObject({
  Sent: z.union([z.number(), z.string()]).nullish(),
  Days: z.array(z.looseObject({ Date: z.string(), Sent: z.union([z.number(), z.string()]).nullish() })),
});

/** What a source's account asks Postmark for, and the item its counts are named by. */
export function postmarkFilterOf(account: string | null): { query: Record<string, string>; item: string } {
  const filter = account?.trim() ?? "";
  if (filter === "") return { query: {}, item: "Sent" };
  if (filter.startsWith(TAG_PREFIX)) return { query: { tag: filter.slice(TAG_PREFIX.length) }, item: filter };
  return { query: { messagestream: filter }, item: filter };
}

/** What Postmark reported for the days: emails sent per US Eastern day, of the account's stream or tag. */
export async function pullPostmark(source: UsageSource, days: ProviderDay[], ctx: ProviderContext): Promise<ReportedRow[]> {
  requireZone(source, POSTMARK_ZONE, PROVIDER, "statistics");
  guardCredentialHost(source, "postmark", ctx);
  const { days: asked } = interval(days, source.timeZone);
  const sorted = [...asked].sort();
  const { query: filter, item } = postmarkFilterOf(source.account);
  const query = new URLSearchParams({ fromdate: sorted[0] ?? "", todate: sorted[sorted.length - 1] ?? "", ...filter });
  const http = httpOptions(PROVIDER, { "x-postmark-server-token": ctx.secret }, ctx, [ctx.secret]);
  const parsed = Sends.safeParse(await getJson(`${baseUrl(source, "postmark")}/stats/outbound/sends?${query.toString()}`, http));
  if (!parsed.success) throw shapeError(PROVIDER, "/stats/outbound/sends", parsed.error.issues[0]);
  const rows: ReportedRow[] = [];
  let previous = "";
  for (const [i, d] of parsed.data.Days.entries()) {
    // "2026-11-01", or "2026-11-01T00:00:00" (a midnight in Postmark's zone): the day.
    const day = /^(\d{4}-\d{2}-\d{2})(?:T00:00:00)?$/.exec(d.Date)?.[1];
    if (day === undefined) throw shapeError(PROVIDER, "/stats/outbound/sends", { path: ["Days", i, "Date"], message: `not a day: '${d.Date.slice(0, 40)}'` });
    // The days come once each, in order: a day twice would be counted twice.
    if (day <= previous)
      throw shapeError(PROVIDER, "/stats/outbound/sends", {
        path: ["Days", i, "Date"],
        message: `${day} after ${previous}: the days are not once each in order`,
      });
    previous = day;
    const units = d.Sent === null || d.Sent === undefined ? 0 : unitsOf(PROVIDER, `Days[${i}].Sent`, d.Sent);
    if (!asked.has(day)) continue;
    rows.push({ day, item, units, costMicros: null, unit: "emails", raw: { api: "stats/outbound/sends", ...filter, ...d } });
  }
  return rows;
}
