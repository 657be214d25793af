import { z } from "zod";
import { startOfDay } from "../days";
import { ReconciliationError } from "../errors";
import { getJson } from "../provider-http";
import type { ProviderDay, ReportedRow, UsageSource } from "../types";
import { baseUrl, guardCredentialHost, httpOptions, interval, MAX_PAGES, moneyOf, shapeError, unitsOf, type ProviderContext } from "./common";

// Twilio's usage records, one per category and day:
//   GET /2010-04-01/Accounts/{Sid}/Usage/Records/Daily.json?StartDate=&EndDate= (both inclusive, GMT)
// with HTTP basic auth (Account SID : auth token); pages follow `next_page_uri` (a path on the same
// host). item = category, units = `usage` in its `usage_unit` (segments for SMS, minutes for calls:
// what the price is per; `count` is messages or calls), money = price in price_unit (which must
// be the source's currency). Twilio also reports roll-ups of other categories ("sms" is
// sms-inbound + sms-outbound, "sms-outbound" is its longcode, shortcode and toll-free leaves,
// "totalprice" is everything): a prefix rule such as `sms-outbound*` would count the roll-up and
// its leaves, twice the bill. So only leaves are mapped: a roll-up row is kept as reported and
// marked (isTwilioRollup), never mapped, billed or listed as unmapped.

const PROVIDER = "Twilio";
const SID = /^AC[0-9a-fA-F]{32}$/;

const UsageRecord = z.looseObject({
  category: z.string(),
  start_date: z.string(),
  end_date: z.string().nullish(),
  count: z.union([z.string(), z.number()]).nullish(),
  usage: z.union([z.string(), z.number()]).nullish(),
  usage_unit: z.string().nullish(),
  price: z.union([z.string(), z.number()]).nullish(),
  price_unit: z.string().nullish(),
  count_unit: z.string().nullish(),
});
const RecordsPage = z.looseObject({ usage_records: z.array(UsageRecord), next_page_uri: z.string().nullish() });

/** What Twilio reported for the days: count and price per usage category (zero rows left out). */
export async function pullTwilio(source: UsageSource, days: ProviderDay[], ctx: ProviderContext): Promise<ReportedRow[]> {
  const sid = source.account ?? "";
  if (!SID.test(sid))
    throw new ReconciliationError("provider_shape", `the Twilio source '${source.name}' needs its Account SID (AC followed by 32 hex digits) as its account`);
  guardCredentialHost(source, "twilio", ctx);
  const { days: asked } = interval(days, source.timeZone);
  const sorted = [...asked].sort();
  const first = sorted[0] ?? "";
  const last = sorted[sorted.length - 1] ?? "";
  // Twilio's dates are GMT days: a source counting another zone's days would compare other intervals.
  for (const day of [first, last]) {
    if (startOfDay(day, source.timeZone).getTime() !== Date.parse(`${day}T00:00:00Z`)) {
      throw new ReconciliationError(
        "day_mismatch",
        `Twilio's usage records count GMT days, but the source '${source.name}' counts days in ${source.timeZone}: set its time zone to UTC`,
      );
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
      const byUsage = r.usage !== null && r.usage !== undefined && r.usage !== "";
      const units = byUsage ? usageUnits(r.usage ?? 0) : r.count === null || r.count === undefined || r.count === "" ? 0 : unitsOf(PROVIDER, "count", r.count);
      const price = r.price === null || r.price === undefined || r.price === "" ? null : moneyOf(PROVIDER, r.price, r.price_unit, source);
      if (units === 0 && (price === null || price === 0)) continue;
      const unit = byUsage ? r.usage_unit?.trim() : r.count_unit?.trim();
      rows.push({ day, item: r.category, units, costMicros: price, ...(unit ? { unit } : {}), raw: { ...r } });
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
  return markRollups(rows);
}

// Roll-ups Twilio documents with no leaf named after them (their leaves are other words): the
// whole bill, and the totals of a product. Every other roll-up is found by its leaves (below).
const NAMED_ROLLUPS = new Set(["totalprice", "calls", "sms", "mms", "phonenumbers"]);

/**
 * A category that sums others: one of the named totals, or a category other categories extend
 * with "-" on the same day ("sms-outbound" beside "sms-outbound-longcode"). The rule form refuses
 * a named total; a prefix rule never reaches a roll-up, since roll-up rows are never mapped.
 */
export function isTwilioRollup(category: string, categoriesOfDay: ReadonlySet<string> | null = null): boolean {
  if (NAMED_ROLLUPS.has(category)) return true;
  if (categoriesOfDay === null) return false;
  for (const other of categoriesOfDay) if (other !== category && other.startsWith(`${category}-`)) return true;
  return false;
}

function markRollups(rows: ReportedRow[]): ReportedRow[] {
  const byDay = new Map<ProviderDay, Set<string>>();
  for (const r of rows) byDay.set(r.day, (byDay.get(r.day) ?? new Set()).add(r.item));
  return rows.map((r) => (isTwilioRollup(r.item, byDay.get(r.day) ?? null) ? { ...r, rollup: true } : r));
}

/**
 * Twilio's `usage` as whole units: a decimal string ("12", "3.5" minutes) is rounded up, as the
 * ledger rounds a reservation's money up, so the bill is never read as less than was used.
 */
function usageUnits(value: string | number): number {
  const text = String(value).trim();
  if (!/^\d+(\.\d+)?$/.test(text))
    throw shapeError(PROVIDER, "Usage/Records/Daily.json", { path: ["usage"], message: `not a number 0 or more: ${JSON.stringify(value).slice(0, 40)}` });
  const [whole = "0", fraction = ""] = text.split(".");
  const units = Number(whole) + (/[1-9]/.test(fraction) ? 1 : 0);
  if (!Number.isSafeInteger(units)) throw shapeError(PROVIDER, "Usage/Records/Daily.json", { path: ["usage"], message: `too large: ${text.slice(0, 40)}` });
  return units;
}
