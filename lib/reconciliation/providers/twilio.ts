import { z } from "zod";
import { startOfDay } from "../days";
import { ReconciliationError } from "../errors";
import { getJson } from "../provider-http";
import type { ProviderDay, ReportedRow, UsageSource } from "../types";
import { baseUrl, guardCredentialHost, httpOptions, interval, MAX_PAGES, moneyOf, shapeError, unitsOf, type ProviderContext } from "./common";

// Twilio's usage records, one per category and day:
//   GET /2010-04-01/Accounts/{Sid}/Usage/Records/Daily.json?StartDate=&EndDate= (both inclusive, GMT)
// with HTTP basic auth (Account SID : auth token); pages follow `next_page_uri` (a path on the same
// host). item = category, units = count, money = price in price_unit (which must be the source's
// currency). Twilio also reports roll-up categories ("sms" is sms-inbound + sms-outbound, and
// "totalprice" is everything): map either the roll-up or its parts, never both.

const PROVIDER = "Twilio";
const SID = /^AC[0-9a-fA-F]{32}$/;

const UsageRecord = z.looseObject({
  category: z.string(),
  start_date: z.string(),
  end_date: z.string().nullish(),
  count: z.union([z.string(), z.number()]).nullish(),
  price: z.union([z.string(), z.number()]).nullish(),
  price_unit: z.string().nullish(),
});
const RecordsPage = z.looseObject({ usage_records: z.array(UsageRecord), next_page_uri: z.string().nullish() });

/** What Twilio reported for the days: count and price per usage category (zero rows left out). */
export async function pullTwilio(source: UsageSource, days: ProviderDay[], ctx: ProviderContext): Promise<ReportedRow[]> {
  const sid = source.account ?? "";
  if (!SID.test(sid)) throw new ReconciliationError("provider_shape", `the Twilio source '${source.name}' needs its Account SID (AC followed by 32 hex digits) as its account`);
  guardCredentialHost(source, "twilio", ctx);
  const { days: asked } = interval(days, source.timeZone);
  const sorted = [...asked].sort();
  const first = sorted[0] ?? "";
  const last = sorted[sorted.length - 1] ?? "";
  // Twilio's dates are GMT days: a source counting another zone's days would compare other intervals.
  for (const day of [first, last]) {
    if (startOfDay(day, source.timeZone).getTime() !== Date.parse(`${day}T00:00:00Z`)) {
      throw new ReconciliationError("day_mismatch", `Twilio's usage records count GMT days, but the source '${source.name}' counts days in ${source.timeZone}: set its time zone to UTC`);
    }
  }
  const base = baseUrl(source, "twilio");
  const origin = new URL(base).origin;
  // The base64 of SID:token is the token in all but name: masked in any error like the token, and
  // so is the whole header value (an error page may echo it).
  const basic = Buffer.from(`${sid}:${ctx.secret}`).toString("base64");
  const http = httpOptions(PROVIDER, { authorization: `Basic ${basic}` }, ctx, [`Basic ${basic}`, basic, ctx.secret]);
  const query = new URLSearchParams({ StartDate: first, EndDate: last, PageSize: "1000" });
  let next: string | null = `${base}/2010-04-01/Accounts/${sid}/Usage/Records/Daily.json?${query.toString()}`;
  const rows: ReportedRow[] = [];
  const seen = new Set<string>();
  for (let n = 0; n < MAX_PAGES && next !== null; n++) {
    const body = await getJson(next, http);
    const parsed = RecordsPage.safeParse(body);
    if (!parsed.success) throw shapeError(PROVIDER, "Usage/Records/Daily.json", parsed.error.issues[0]);
    for (const r of parsed.data.usage_records) {
      const day = r.start_date;
      if (!asked.has(day)) continue;
      if (r.end_date && r.end_date !== day) throw shapeError(PROVIDER, `a daily record from ${day} to ${r.end_date}`, undefined);
      const units = r.count === null || r.count === undefined || r.count === "" ? 0 : unitsOf(PROVIDER, "count", r.count);
      const price = r.price === null || r.price === undefined || r.price === "" ? null : moneyOf(PROVIDER, r.price, r.price_unit, source);
      if (units === 0 && (price === null || price === 0)) continue;
      rows.push({ day, item: r.category, units, costMicros: price, raw: { ...r } });
    }
    const uri = parsed.data.next_page_uri;
    if (!uri) {
      next = null;
      break;
    }
    // The next page is a path on the same host, never somewhere the body says.
    const resolved = new URL(uri.startsWith("/") ? `${base}${uri}` : uri);
    if (resolved.origin !== origin) throw shapeError(PROVIDER, `a next page on another host (${resolved.host})`, undefined);
    if (seen.has(resolved.toString())) throw shapeError(PROVIDER, "a next_page_uri that repeated", undefined);
    seen.add(resolved.toString());
    next = resolved.toString();
  }
  if (next !== null) throw shapeError(PROVIDER, `more than ${MAX_PAGES} pages`, undefined);
  return rows;
}
