import { ReconciliationError } from "../errors";
import { getText } from "../provider-http";
import { addDays, dayIn, startOfDay } from "../days";
import { AWS_REGION } from "../source-input";
import type { ProviderDay, ReportedRow, UsageSource } from "../types";
import { baseUrl, guardCredentialHost, httpOptions, interval, shapeError, unitsOf, type ProviderContext } from "./common";
import { signGet, type AwsCredentials } from "./sigv4";

// Amazon SES's sending statistics, the Query API signed with Signature Version 4 (service "ses"):
//   GET https://email.<region>.amazonaws.com/?Action=GetSendStatistics&Version=2010-12-01
// answers XML: SendDataPoints, one member per 15 minutes with mail in the last two weeks, each with
// Timestamp, DeliveryAttempts, Bounces, Complaints, Rejects. SES bills by messages sent, so units =
// DeliveryAttempts, summed into the source's days (any zone: the points are 15 minutes apart),
// item "DeliveryAttempts". No money: priced at the endpoint's part. The credential's variable holds
// ACCESS_KEY_ID:SECRET_ACCESS_KEY of an IAM user allowed ses:GetSendStatistics; the source's
// account is the region. Only days wholly inside the two weeks are asked for (lookback ≤ 13).

const PROVIDER = "Amazon SES";
const WINDOW_MS = 14 * 86_400_000;

export function sesCredentials(source: Pick<UsageSource, "name">, secret: string): AwsCredentials {
  const at = secret.indexOf(":");
  const accessKeyId = at < 0 ? "" : secret.slice(0, at).trim();
  const secretAccessKey = at < 0 ? "" : secret.slice(at + 1).trim();
  if (!/^[A-Z0-9]{16,128}$/.test(accessKeyId) || secretAccessKey === "") {
    throw new ReconciliationError("credential_missing", `the key of '${source.name}' must be ACCESS_KEY_ID:SECRET_ACCESS_KEY (an IAM user's key allowed ses:GetSendStatistics)`);
  }
  return { accessKeyId, secretAccessKey };
}

/** The members of SendDataPoints, each a map of its elements; anything else in the answer is refused. */
function dataPoints(xml: string): Record<string, string>[] {
  if (!/<GetSendStatisticsResponse[\s>]/.test(xml)) throw shapeError(PROVIDER, "GetSendStatistics", { path: [], message: "no GetSendStatisticsResponse element" });
  const list = /<SendDataPoints>([\s\S]*?)<\/SendDataPoints>|<SendDataPoints\s*\/>/.exec(xml);
  if (!list) throw shapeError(PROVIDER, "GetSendStatistics", { path: ["SendDataPoints"], message: "missing" });
  const out: Record<string, string>[] = [];
  for (const member of (list[1] ?? "").matchAll(/<member>([\s\S]*?)<\/member>/g)) {
    const fields: Record<string, string> = {};
    for (const f of (member[1] ?? "").matchAll(/<(\w+)>([^<]*)<\/\1>/g)) fields[f[1] ?? ""] = (f[2] ?? "").trim();
    out.push(fields);
  }
  return out;
}

/** What SES reported for the days: messages sent, its 15-minute points summed into the source's days. */
export async function pullSes(source: UsageSource, days: ProviderDay[], ctx: ProviderContext): Promise<ReportedRow[]> {
  const region = source.account ?? "";
  if (!AWS_REGION.test(region)) throw new ReconciliationError("provider_shape", `the Amazon SES source '${source.name}' needs its region (such as us-east-1) as its account`);
  guardCredentialHost(source, "ses", ctx);
  const credentials = sesCredentials(source, ctx.secret);
  const { start, days: asked } = interval(days, source.timeZone);
  const now = ctx.now ?? new Date();
  if (start.getTime() < now.getTime() - WINDOW_MS) {
    throw new ReconciliationError("day_mismatch", `SES keeps two weeks of sending statistics: '${source.name}' asks from ${dayIn(start, source.timeZone)}; set its lookback days to 13 or fewer`);
  }
  const url = new URL(`${baseUrl(source, "ses")}/`);
  url.search = new URLSearchParams({ Action: "GetSendStatistics", Version: "2010-12-01" }).toString();
  const signed = signGet({ url, region, service: "ses", credentials, at: now });
  const http = httpOptions(PROVIDER, signed, ctx, [credentials.secretAccessKey, ctx.secret, signed.authorization]);
  const xml = await getText(url.toString(), { ...http, accept: "text/xml" });
  const perDay = new Map<ProviderDay, { units: number; points: number }>();
  for (const point of dataPoints(xml)) {
    const at = new Date(point.Timestamp ?? "");
    if (Number.isNaN(at.getTime())) throw shapeError(PROVIDER, "GetSendStatistics", { path: ["Timestamp"], message: `not a time: ${(point.Timestamp ?? "").slice(0, 40)}` });
    const day = dayIn(at, source.timeZone);
    if (!asked.has(day)) continue;
    const sum = perDay.get(day) ?? { units: 0, points: 0 };
    sum.units += unitsOf(PROVIDER, "DeliveryAttempts", point.DeliveryAttempts ?? "");
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
      raw: { api: "GetSendStatistics", points: sum.points, from: startOfDay(day, source.timeZone).toISOString(), to: startOfDay(addDays(day, 1), source.timeZone).toISOString() },
    }));
}
