import { sql } from "drizzle-orm";
import { type Db, resultRows } from "@/db/client";
import { fireAlert } from "./fire";
import { DAY_MS, utcDay } from "@/lib/time";

// Per-caller ceilings do not alert per caller: a thousand accounts reaching their daily quota is
// a normal day, not a thousand pages. Instead one digest a day says how many accounts hit theirs
// yesterday (UTC), by endpoint. An account "hit" its quota when a per-caller ceiling refused it,
// or when its daily counter reached its limit (its override, else the ceiling's value).

export type DigestEndpoint = { endpointId: number; endpointKey: string; accounts: number; refusals: number };
export type Digest = { day: string; accounts: number; endpoints: DigestEndpoint[] };

function utcDayStart(at: Date): Date {
  return new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate()));
}

/** Who hit a per-caller quota on the UTC day before `now`. */
export async function readQuotaDigest(db: Db, p: { now: Date }): Promise<Digest> {
  const to = utcDayStart(p.now);
  const from = new Date(to.getTime() - DAY_MS);
  const rows = resultRows<{ endpoint_id: number; endpoint_key: string; accounts: string | number; refusals: string | number }>(
    await db.execute(sql`
      with hits as (
        select c.endpoint_id, r.caller, r.count as refusals
        from refusals r join ceilings c on c.id = r.ceiling_id
        where r.gate = 'ceiling' and c.scope = 'caller' and r.caller <> ''
          and r.at >= ${from.toISOString()}::timestamptz and r.at < ${to.toISOString()}::timestamptz
        union all
        select c.endpoint_id, u.scope_key, 0
        from usage u join ceilings c on c.id = u.ceiling_id
        cross join lateral ceilings.caller_limit(c.id, u.scope_key) l
        where c.scope = 'caller' and c.window = 'utc_day' and u.window_start = ${from.toISOString()}::timestamptz
          and l.value > 0 and u.held + u.settled >= l.value
      )
      select h.endpoint_id, e.key as endpoint_key, count(distinct h.caller) as accounts, sum(h.refusals) as refusals
      from hits h join endpoints e on e.id = h.endpoint_id
      group by h.endpoint_id, e.key
      order by count(distinct h.caller) desc, e.key`),
  );
  const endpoints = rows.map((r) => ({
    endpointId: r.endpoint_id,
    endpointKey: r.endpoint_key,
    accounts: Number(r.accounts),
    refusals: Number(r.refusals),
  }));
  // An account capped on two endpoints counts once per endpoint: the quotas are separate.
  const accounts = endpoints.reduce((sum, e) => sum + e.accounts, 0);
  return { day: utcDay(from.getTime()), accounts, endpoints };
}

export function digestMessage(d: Digest): string {
  const list = d.endpoints.map((e) => `${e.endpointKey} ${e.accounts}`).join(", ");
  return `${d.accounts} account quota(s) hit on ${d.day} (UTC): ${list}`;
}

/**
 * Fires yesterday's digest once (its dedupe key is the day). Nothing is sent on a day when no
 * account hit its quota: a daily "nothing happened" would teach people to ignore the inbox.
 */
export async function fireQuotaDigest(db: Db, p: { now: Date }): Promise<{ fired: boolean; digest: Digest }> {
  const digest = await readQuotaDigest(db, p);
  if (digest.accounts === 0) return { fired: false, digest };
  const only = digest.endpoints.length === 1 ? digest.endpoints[0] : undefined;
  const fired = await fireAlert(db, {
    kind: "digest",
    dedupeKey: `digest:${digest.day}`,
    endpointId: only?.endpointId ?? null,
    windowStart: new Date(`${digest.day}T00:00:00Z`),
    message: digestMessage(digest),
    details: {
      day: digest.day,
      accounts: digest.accounts,
      endpoints: digest.endpoints,
      windowEnd: new Date(Date.parse(`${digest.day}T00:00:00Z`) + DAY_MS).toISOString(),
    },
  });
  return { fired, digest };
}
