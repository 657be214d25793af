import { ReconciliationError } from "../errors";
import { getText } from "../provider-http";
import { addDays, dayIn, startOfDay } from "../days";
import { AWS_REGION, SES_LOOKBACK_MAX } from "../source-input";
import type { ProviderDay, ReportedRow, UsageSource } from "../types";
import { baseUrl, guardCredentialHost, httpOptions, interval, shapeError, unitsOf, type ProviderContext } from "./common";
import { signGet, type AwsCredentials } from "./sigv4";

// Amazon SES's sending statistics, the Query API signed with Signature Version 4 (service "ses"):
//   GET https://email.<region>.amazonaws.com/?Action=GetSendStatistics&Version=2010-12-01
// answers XML: SendDataPoints, one member per 15 minutes with mail in the last two weeks, each with
// Timestamp, DeliveryAttempts, Bounces, Complaints, Rejects, and the answer's RequestId. SES bills
// each message it sends, per recipient, bounced or not: DeliveryAttempts ("emails that have been
// sent") is that count, summed into the source's days (any zone: a day of any zone is made of whole
// 15-minute points), item "DeliveryAttempts". No money: priced at the endpoint's part. The SDK is
// not used (a dependency for one signed GET a day): sigv4.ts signs, this file reads the fixed XML.
//
// The credential's variable holds ACCESS_KEY_ID:SECRET_ACCESS_KEY of an IAM user allowed
// ses:GetSendStatistics; the source's account is the region. SES keeps two weeks: a day that
// starts before them would be summed from part of its points (or none) and read as a day of little
// mail, so such a pull is refused whole rather than written (the form holds lookback to
// SES_LOOKBACK_MAX, which keeps every asked day inside the two weeks whatever the zone).

const PROVIDER = "Amazon SES";
const WINDOW_MS = 14 * 86_400_000;
/** GetSendStatistics allows one request a second: no retry follows another sooner than this. */
const MIN_RETRY_MS = 1_000;

export function sesCredentials(source: Pick<UsageSource, "name">, secret: string): AwsCredentials {
  const at = secret.indexOf(":");
  const accessKeyId = at < 0 ? "" : secret.slice(0, at).trim();
  const secretAccessKey = at < 0 ? "" : secret.slice(at + 1).trim();
  if (!/^[A-Z0-9]{16,128}$/.test(accessKeyId) || secretAccessKey === "") {
    throw new ReconciliationError(
      "credential_missing",
      `the key of '${source.name}' must be ACCESS_KEY_ID:SECRET_ACCESS_KEY (an IAM user's key allowed ses:GetSendStatistics)`,
    );
  }
  return { accessKeyId, secretAccessKey };
}

/** One 15-minute point as SES sent it. */
type Point = { at: Date; deliveryAttempts: number };

const COUNTS = ["DeliveryAttempts", "Bounces", "Complaints", "Rejects"] as const;
const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?(?:Z|[+-]\d{2}:\d{2})$/;

/**
 * The points of a GetSendStatistics answer. A reader for this one fixed shape, not an XML parser:
 * the document must be exactly GetSendStatisticsResponse > GetSendStatisticsResult > SendDataPoints
 * of members, then ResponseMetadata > RequestId, each member holding only the five documented
 * elements (each once, counts as digits, Timestamp an ISO instant); anything else (another element,
 * text, a comment, CDATA, an entity, a DOCTYPE) is refused, so nothing is read from a shape not
 * understood. The counts are documented optional: an absent one is 0, a point without its time is
 * refused (its day cannot be told).
 */
export function sesDataPoints(xml: string): { points: Point[]; requestId: string } {
  const bad = (path: string[], message: string) => shapeError(PROVIDER, "GetSendStatistics", { path, message });
  const text = xml
    .replace(/^\uFEFF/, "")
    .replace(/^\s*<\?xml\s[^?>]*\?>/, "")
    .trim();
  if (/<!|<\?|&/.test(text)) throw bad([], "it holds a declaration, comment, CDATA section or entity reference");
  const doc =
    /^<GetSendStatisticsResponse(?:\s+xmlns="[^"<>]*")?\s*>\s*<GetSendStatisticsResult>\s*(?:<SendDataPoints>([\s\S]*)<\/SendDataPoints>|<SendDataPoints\s*\/>)\s*<\/GetSendStatisticsResult>\s*<ResponseMetadata>\s*<RequestId>([\w-]{1,100})<\/RequestId>\s*<\/ResponseMetadata>\s*<\/GetSendStatisticsResponse>$/.exec(
      text,
    );
  if (!doc) throw bad([], "not GetSendStatisticsResponse > GetSendStatisticsResult > SendDataPoints, then ResponseMetadata > RequestId");
  const points: Point[] = [];
  const list = doc[1] ?? "";
  const member = /\s*<member>([\s\S]*?)<\/member>/y;
  let read = 0;
  for (let m = member.exec(list); m; m = member.exec(list)) {
    read = member.lastIndex;
    const path = ["SendDataPoints", `member[${points.length}]`];
    const fields = new Map<string, string>();
    const body = m[1] ?? "";
    const element = /\s*<([A-Za-z]+)>([^<]*)<\/\1>/y;
    let end = 0;
    for (let e = element.exec(body); e; e = element.exec(body)) {
      const [, name = "", value = ""] = e;
      if (name !== "Timestamp" && !(COUNTS as readonly string[]).includes(name))
        throw bad(path, `an element SES does not document here: <${name.slice(0, 40)}>`);
      if (fields.has(name)) throw bad(path, `<${name}> twice`);
      fields.set(name, value.trim());
      end = element.lastIndex;
    }
    if (body.slice(end).trim() !== "") throw bad(path, `something other than its elements: ${body.slice(end).trim().slice(0, 40)}`);
    const time = fields.get("Timestamp") ?? "";
    const at = new Date(time);
    if (!ISO_INSTANT.test(time) || Number.isNaN(at.getTime())) throw bad([...path, "Timestamp"], `not an ISO 8601 instant: '${time.slice(0, 40)}'`);
    for (const count of COUNTS) {
      const value = fields.get(count);
      if (value !== undefined) unitsOf(PROVIDER, `${path.join(".")}.${count}`, value);
    }
    points.push({ at, deliveryAttempts: fields.has("DeliveryAttempts") ? Number(fields.get("DeliveryAttempts")) : 0 });
  }
  const rest = list.slice(read);
  if (rest.trim() !== "") throw bad(["SendDataPoints"], `something other than members: ${rest.trim().slice(0, 40)}`);
  return { points, requestId: doc[2] ?? "" };
}

/** What SES reported for the days: messages sent, its 15-minute points summed into the source's days. */
export async function pullSes(source: UsageSource, days: ProviderDay[], ctx: ProviderContext): Promise<ReportedRow[]> {
  const region = source.account ?? "";
  if (!AWS_REGION.test(region))
    throw new ReconciliationError("provider_shape", `the Amazon SES source '${source.name}' needs its region (such as us-east-1) as its account`);
  guardCredentialHost(source, "ses", ctx);
  const credentials = sesCredentials(source, ctx.secret);
  const { start, days: asked } = interval(days, source.timeZone);
  const now = ctx.now ?? new Date();
  if (start.getTime() < now.getTime() - WINDOW_MS) {
    throw new ReconciliationError(
      "day_mismatch",
      `SES keeps two weeks of sending statistics: '${source.name}' asks from ${dayIn(start, source.timeZone)}, which starts before them and would be read short; set its lookback days to ${SES_LOOKBACK_MAX} or fewer. Nothing was written`,
    );
  }
  const url = new URL(`${baseUrl(source, "ses")}/`);
  url.search = new URLSearchParams({ Action: "GetSendStatistics", Version: "2010-12-01" }).toString();
  // Signed once, at the pull's time: its retries end within the pull's deadline (4 minutes), inside
  // the five minutes AWS gives a signed request to reach it.
  const signed = signGet({ url, region, service: "ses", credentials, at: now });
  const sleep = ctx.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  // A retry after a 5xx (its first backoff is half a second) waits a second, the API's rate.
  const paced = { ...ctx, sleep: (ms: number) => sleep(Math.max(ms, MIN_RETRY_MS)) };
  const http = httpOptions(PROVIDER, signed, paced, [credentials.secretAccessKey, ctx.secret, signed.authorization]);
  const { points, requestId } = sesDataPoints(await getText(url.toString(), { ...http, accept: "text/xml" }));
  const perDay = new Map<ProviderDay, { units: number; points: number }>();
  for (const point of points) {
    const day = dayIn(point.at, source.timeZone);
    if (!asked.has(day)) continue;
    const sum = perDay.get(day) ?? { units: 0, points: 0 };
    sum.units += point.deliveryAttempts;
    sum.points += 1;
    perDay.set(day, sum);
  }
  return [...perDay.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([day, sum]) => ({
      day,
      item: "DeliveryAttempts",
      units: sum.units,
      costMicros: null,
      unit: "messages",
      raw: {
        api: "GetSendStatistics",
        requestId,
        points: sum.points,
        from: startOfDay(day, source.timeZone).toISOString(),
        to: startOfDay(addDays(day, 1), source.timeZone).toISOString(),
      },
    }));
}
