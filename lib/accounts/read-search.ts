import { sql } from "drizzle-orm";
import { z } from "zod";
import type { Db } from "@/db/client";
import { CallerKey } from "@/lib/canonical/caller";
import { InputError } from "@/lib/errors";
import { Int, parseRows } from "@/lib/spend/source";

// Finding an account by its id or a prefix of it, over the accounts table (every caller a
// reservation batch has named, and every account assigned a plan).
//
// The prefix is an explicit range on the pattern operators (~>=~, ~<~), which
// accounts_account_prefix_idx (text_pattern_ops, bytewise order) serves as one index range, not
// LIKE $1 || '%': a LIKE on a bound parameter loses the index once Postgres switches the prepared
// statement to its generic plan (lib/refusals/where.ts found the same), and the range needs no
// escaping, so % and _ typed in a query are matched as themselves.

/** The account id as enforcement keys it (trimmed, 1..200 characters, no control characters), or a clear error. */
export function parseAccountQuery(raw: string): string {
  const parsed = CallerKey.safeParse(raw);
  if (!parsed.success) throw InputError.of(parsed.error.issues[0]?.message ?? "invalid billing account");
  return parsed.data;
}

const MAX_CODE_POINT = 0x10ffff;

/** The next code point UTF-8 can encode (surrogates are not characters), or null past the last. */
function nextCodePoint(cp: number): number | null {
  if (cp >= MAX_CODE_POINT) return null;
  return cp + 1 === 0xd800 ? 0xe000 : cp + 1;
}

/**
 * Every string starting with `prefix`, as a bytewise range [from, to): UTF-8 orders bytes as code
 * points, so `to` is the prefix with its last code point raised by one (dropping trailing
 * U+10FFFF, which has no successor). null `to`: no upper bound (a prefix of only U+10FFFF).
 */
export function prefixRange(prefix: string): { from: string; to: string | null } {
  const points = Array.from(prefix, (c) => c.codePointAt(0) ?? 0);
  while (points.length > 0) {
    const last = points.pop() ?? 0;
    const next = nextCodePoint(last);
    if (next !== null) return { from: prefix, to: String.fromCodePoint(...points, next) };
  }
  return { from: prefix, to: null };
}

export type AccountMatch = {
  account: string;
  /** null only if no plan is the default (the schema and the write path keep exactly one). */
  planKey: string | null;
  planName: string | null;
  /** Never assigned: on whichever plan is the default. */
  onDefault: boolean;
  blockedAt: Date | null;
  firstSeenAt: Date;
};

export type AccountSearch = { query: string; matches: AccountMatch[]; more: boolean };

const MatchRow = z.object({
  account: z.string(),
  plan_key: z.string().nullable(),
  plan_name: z.string().nullable(),
  on_default: z.boolean(),
  blocked_at: z.coerce.date().nullable(),
  first_seen_at: z.coerce.date(),
});

/**
 * The accounts whose id starts with `query` (the exact id first: it sorts before every longer id
 * it prefixes), at most `limit`, in bytewise order; `more` when others match too.
 */
export async function searchAccounts(db: Db, query: string, limit: number): Promise<AccountSearch> {
  const prefix = parseAccountQuery(query);
  const take = Math.max(1, Math.min(200, Math.trunc(limit)));
  const { from, to } = prefixRange(prefix);
  const rows = parseRows(
    "account search",
    MatchRow,
    await db.execute(sql`
      select a.account, p.key as plan_key, p.name as plan_name, a.plan_id is null as on_default, a.blocked_at, a.first_seen_at
      from accounts a
      left join plans p on p.id = coalesce(a.plan_id, (select d.id from plans d where d.is_default))
      where a.account ~>=~ ${from} ${to === null ? sql`` : sql`and a.account ~<~ ${to}`}
      order by a.account using ~<~
      limit ${take + 1}`),
  );
  return {
    query: prefix,
    matches: rows.slice(0, take).map((r) => ({
      account: r.account,
      planKey: r.plan_key,
      planName: r.plan_name,
      onDefault: r.on_default,
      blockedAt: r.blocked_at,
      firstSeenAt: r.first_seen_at,
    })),
    more: rows.length > take,
  };
}

/** Below this many accounts (by the planner's estimate) they are counted exactly. */
export const EXACT_ACCOUNTS_UP_TO = 100_000;

/**
 * How many accounts Ceilings knows. A count of a million rows is not free, so a big table is the
 * planner's estimate (kept by autovacuum's analyze; `approximate`); a small one is counted, since a
 * table never analysed estimates 0 (the page said "about 0 accounts" beside a table of four).
 */
export async function estimateAccounts(db: Db, exactUpTo = EXACT_ACCOUNTS_UP_TO): Promise<{ n: number; approximate: boolean }> {
  const [row] = parseRows(
    "accounts estimate",
    z.object({ n: Int }),
    await db.execute(sql`select greatest(reltuples, 0)::bigint as n from pg_class where oid = 'accounts'::regclass`),
  );
  const estimate = row?.n ?? 0;
  if (estimate >= exactUpTo) return { n: estimate, approximate: true };
  const [exact] = parseRows("accounts count", z.object({ n: Int }), await db.execute(sql`select count(*)::bigint as n from accounts`));
  return { n: exact?.n ?? 0, approximate: false };
}
