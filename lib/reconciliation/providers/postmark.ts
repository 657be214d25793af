import { z } from "zod";
import { POSTMARK_ZONE } from "../source-input";
import { getJson } from "../provider-http";
import type { ProviderDay, ReportedRow, UsageSource } from "../types";
import { baseUrl, guardCredentialHost, httpOptions, interval, requireZone, shapeError, unitsOf, type ProviderContext } from "./common";

// Postmark's outbound statistics (a server API token in X-Postmark-Server-Token):
//   GET /stats/outbound/sends?fromdate=&todate=[&messagestream=] → { Days: [{ Date, Sent }], Sent }
// one entry per day with mail, its days US Eastern (America/New_York), as Postmark documents. Postmark
// bills by emails sent: units = Sent, item = the message stream (the source's account, else
// "outbound", Postmark's default transactional stream). No money: priced at the endpoint's part.

const PROVIDER = "Postmark";

const Sends = z.looseObject({ Days: z.array(z.looseObject({ Date: z.string(), Sent: z.union([z.number(), z.string()]).nullish() })) });

/** What Postmark reported for the days: emails sent per US Eastern day. */
export async function pullPostmark(source: UsageSource, days: ProviderDay[], ctx: ProviderContext): Promise<ReportedRow[]> {
  requireZone(source, POSTMARK_ZONE, PROVIDER, "statistics");
  guardCredentialHost(source, "postmark", ctx);
  const { days: asked } = interval(days, source.timeZone);
  const sorted = [...asked].sort();
  const query = new URLSearchParams({ fromdate: sorted[0] ?? "", todate: sorted[sorted.length - 1] ?? "" });
  if (source.account) query.set("messagestream", source.account);
  const http = httpOptions(PROVIDER, { "x-postmark-server-token": ctx.secret }, ctx, [ctx.secret]);
  const parsed = Sends.safeParse(await getJson(`${baseUrl(source, "postmark")}/stats/outbound/sends?${query.toString()}`, http));
  if (!parsed.success) throw shapeError(PROVIDER, "/stats/outbound/sends", parsed.error.issues[0]);
  const item = source.account ?? "outbound";
  const rows: ReportedRow[] = [];
  for (const d of parsed.data.Days) {
    // "2026-11-01" or "2026-11-01T00:00:00": the day is its first ten characters.
    const day = d.Date.slice(0, 10);
    if (!/^\d{4}-\d{2}-\d{2}$/.test(day)) throw shapeError(PROVIDER, "/stats/outbound/sends", { path: ["Days", "Date"], message: `not a day: ${d.Date.slice(0, 40)}` });
    if (!asked.has(day)) continue;
    const units = d.Sent === null || d.Sent === undefined ? 0 : unitsOf(PROVIDER, "Sent", d.Sent);
    rows.push({ day, item, units, costMicros: null, unit: "emails", raw: { api: "stats/outbound/sends", ...d } });
  }
  return rows;
}
