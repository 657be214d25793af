import { sql } from "drizzle-orm";
import { resultRows, type Db } from "@/db/client";
import { IN_FLIGHT_MS, lockClosedWindows } from "@/lib/counters/closed-windows";
import { DAY_MS, utcDay } from "@/lib/time";

// The grants a what-if replays, as columns (lib/changes/what-if-replay.ts reads them), and the
// ledger it reads them from (what_if_days, migration 0033).
//
// A month of a busy endpoint is a million reservations: reading them row by row took a second
// before any replay started. Once no reservation made before an instant is held, what each grant
// before it checked and finally charged can only change by a late overrun (ceilings.settle on an
// expired or released reservation, which deletes the day's row). So the worker writes each
// endpoint's day up to such an instant (`through`: the day's end once it is over), as binary
// columns (buildWhatIfDays), and a replay reads thirty rows plus the grants made since `through`.

/** One field of every grant of a run, in (created_at, id) order. */
export type GrantField = "at" | "amount" | "money" | "finalUnits" | "finalMoney" | "free" | "caller" | "destination";

/** Whole numbers, each read as a number; the array type is the narrowest its values fit. */
export type Column = Uint8Array | Uint16Array | Uint32Array | Float64Array;

/** Grants as columns; caller and destination are indexes into `callers` and `destinations`. */
export type GrantColumns = {
  n: number;
  /** Microseconds since the epoch (exact: below 2^53 until the year 2255). */
  at: Column;
  amount: Column;
  money: Column;
  finalUnits: Column;
  finalMoney: Column;
  free: Column;
  caller: Column;
  destination: Column;
  callers: string[];
  destinations: string[];
};

/** One UTC day's grants of the target's endpoints, merged in (created_at, id) order. */
export type DayGrants = { day: string; grants: GrantColumns };

const COLUMNS: Record<Exclude<GrantField, "at">, string> = {
  amount: "amount",
  money: "money",
  finalUnits: "final_units",
  finalMoney: "final_money",
  free: "free",
  caller: "caller",
  destination: "destination",
};

/** The days the worker keeps written: the longest replay (30 days from the start of a billing month). */
export const WHAT_IF_DAYS_BACK = 62;
export const WHAT_IF_DAYS_EVERY_MS = 10 * 60_000;
/** The grants one run reads at most (a few seconds of the worker's loop, which expiry waits on). */
export const WHAT_IF_DAYS_GRANTS_A_RUN = 500_000;
/** What a day costs the cap at least, in grants: a transaction and a look at its held reservations. */
const DAY_WORK = 200;

// A column: whole numbers from 0 to 2^53 - 1, each in the narrowest of 1, 2, 4 or 8 bytes (a
// float64, exact below 2^53) its largest needs, after an 8-byte header whose first byte is that
// width. Decoding views the bytes as a typed array instead of parsing them: a month of a busy
// endpoint is four million numbers. Little-endian, as every platform Node runs on.
const HEADER = 8;

export function encodeColumn(values: ArrayLike<number>): Buffer {
  let max = 0;
  for (let i = 0; i < values.length; i += 1) {
    const v = values[i] ?? 0;
    if (!Number.isSafeInteger(v) || v < 0) throw new Error(`a what-if column holds whole numbers from 0, got ${v}`);
    if (v > max) max = v;
  }
  const width = max < 2 ** 8 ? 1 : max < 2 ** 16 ? 2 : max < 2 ** 32 ? 4 : 8;
  // Buffer.alloc never hands out a slice of the shared pool: the view below starts aligned.
  const out = Buffer.alloc(HEADER + values.length * width);
  out[0] = width;
  viewOf(out, width, values.length).set(values);
  return out;
}

function viewOf(buf: Uint8Array, width: number, n: number): Column {
  const at = buf.byteOffset + HEADER;
  if (width === 1) return new Uint8Array(buf.buffer, at, n);
  if (width === 2) return new Uint16Array(buf.buffer, at, n);
  if (width === 4) return new Uint32Array(buf.buffer, at, n);
  return new Float64Array(buf.buffer, at, n);
}

/** The column's numbers as a view of its bytes (widening them to one array type cost more). */
export function decodeColumn(bytes: Uint8Array, n: number): Column {
  const width = bytes[0] ?? 0;
  if (![1, 2, 4, 8].includes(width) || bytes.length !== HEADER + n * width) {
    throw new Error(`a what-if column of ${bytes.length} bytes does not hold ${n} values`);
  }
  // A view needs its start aligned to the width: copy the bytes of a column that is not.
  return viewOf(bytes.byteOffset % 8 === 0 ? bytes : new Uint8Array(bytes), width, n);
}

function emptyColumns(n: number): GrantColumns {
  const col = () => new Float64Array(n);
  return {
    n,
    at: col(),
    amount: col(),
    money: col(),
    finalUnits: col(),
    finalMoney: col(),
    free: col(),
    caller: col(),
    destination: col(),
    callers: [],
    destinations: [],
  };
}

// What a grant finally charged: ceilings.final_units and final_money. A release with no overrun
// charged a call nothing. Each grant's fields are packed into one string, grants in order, one
// string per endpoint and day: tens of thousands of rows cost more to send and parse than one
// string. No field is null (concat_ws would drop it). Unit and record separators: a caller or
// destination holds no control character (reserve refuses them).
const packed = sql`
  string_agg(concat_ws(chr(31),
    (extract(epoch from r.created_at) * 1000000)::bigint, r.amount, r.money, ceilings.final_units(r), ceilings.final_money(r),
    (r.state = 'released' and r.settled_amount is null)::int, coalesce(r.destination_key, ''), r.caller), chr(30) order by r.created_at, r.id)`;

const idArray = (ids: number[]) => sql.raw(`'{${ids.map(Number).join(",")}}'::int[]`);
// Instants in microseconds since the epoch, exactly: a Date would cut them to the millisecond.
const instantArray = (us: number[]) => sql.raw(`'{${us.map((t) => `"${usToIso(t)}"`).join(",")}}'::timestamptz[]`);
const dayStart = (day: string) => Date.parse(`${day}T00:00:00Z`);

/** One endpoint's packed grants as columns; `callers` and `destinations` are the distinct values met. */
function unpack(n: number, text: string): GrantColumns {
  const c = emptyColumns(n);
  if (n === 0) return c;
  const callers = new Map<string, number>();
  const destinations = new Map<string, number>();
  const grants = text.split("\u001e");
  if (grants.length !== n) throw new Error(`a packed day holds ${grants.length} grants, not ${n}: a separator in a caller or destination?`);
  grants.forEach((grant, i) => {
    const f = grant.split("\u001f");
    if (f.length < 8) throw new Error(`a packed grant holds ${f.length} fields, not 8`);
    c.at[i] = Number(f[0]);
    c.amount[i] = Number(f[1]);
    c.money[i] = Number(f[2]);
    c.finalUnits[i] = Number(f[3]);
    c.finalMoney[i] = Number(f[4]);
    c.free[i] = Number(f[5]);
    c.destination[i] = indexIn(destinations, c.destinations, f[6] ?? "");
    // The caller is last and may be empty: concat_ws keeps the empty field.
    c.caller[i] = indexIn(callers, c.callers, f.slice(7).join("\u001f"));
  });
  return c;
}

/** The index of `name` in `list`, added at the end when it is new (`seen` indexes `list`). */
export function indexIn(seen: Map<string, number>, list: string[], name: string): number {
  let i = seen.get(name);
  if (i === undefined) {
    i = list.length;
    seen.set(name, i);
    list.push(name);
  }
  return i;
}

/** One endpoint's grants from `from` to `until`, microseconds since the epoch, within one UTC day. */
type Range = { endpointId: number; from: number; until: number };

/** The grants of each range (one endpoint, within one UTC day) from the reservations, by `endpoint:day`. */
async function readLive(db: Db, ranges: Range[]): Promise<Map<string, GrantColumns>> {
  const out = new Map<string, GrantColumns>();
  if (ranges.length === 0) return out;
  const rows = resultRows<{ endpoint_id: number; day: string; n: number; packed: string }>(
    await db.execute(sql`
      select r.endpoint_id, to_char(r.created_at at time zone 'UTC', 'YYYY-MM-DD') as day, count(*)::int as n, ${packed} as packed
      from unnest(${idArray(ranges.map((r) => r.endpointId))}, ${instantArray(ranges.map((r) => r.from))}, ${instantArray(ranges.map((r) => r.until))}) as x(e, s, u)
      join reservations r on r.endpoint_id = x.e and r.created_at >= x.s and r.created_at < x.u
      group by 1, 2`),
  );
  for (const r of rows) out.set(`${r.endpoint_id}:${r.day}`, unpack(r.n, r.packed));
  return out;
}

type StoredRow = { endpoint_id: number; day: string; grants: number; version: string; callers: string[]; destinations: string[] } & Partial<
  Record<string, string>
>;

const columnOf = (f: GrantField) => (f === "at" ? "at" : COLUMNS[f]);

/** The asked fields of a written row, decoded into `into` (its other fields kept). */
function decodeStored(row: StoredRow, fields: GrantField[], into: GrantColumns): GrantColumns {
  into.n = row.grants;
  for (const f of fields) {
    const values = decodeColumn(Buffer.from(row[columnOf(f)] ?? "", "base64"), row.grants);
    into[f] = f === "at" ? instants(values, dayStart(row.day) * 1000) : values;
  }
  into.callers = row.callers;
  into.destinations = row.destinations;
  return into;
}

/** Each grant's instant from the steps: the first from the day's start, the others from the one before. */
function instants(steps: Column, fromUs: number): Float64Array {
  const out = new Float64Array(steps.length);
  let t = fromUs;
  for (let i = 0; i < steps.length; i += 1) {
    t += steps[i] ?? 0;
    out[i] = t;
  }
  return out;
}

// Written rows decoded, by database, endpoint and day, with the version (built_at) they were read
// at. A row never changes while it lives (a late overrun deletes it, the worker writes it anew),
// so the next what-if (the next value typed into the panel) reads the list of rows and no column.
// Least recently used first out, past CACHE_BYTES of columns.
const CACHE_BYTES = 256 * 1024 * 1024;
const cache = new Map<string, { version: string; columns: GrantColumns; bytes: number }>();
let cachedBytes = 0;

const FIELDS: GrantField[] = ["at", "amount", "money", "finalUnits", "finalMoney", "free", "caller", "destination"];

/** Empties the cache: the bench times a what-if that reads every column (a server just started). */
export function forgetWrittenDays(): void {
  cache.clear();
  cachedBytes = 0;
}

function remember(key: string, version: string, columns: GrantColumns): void {
  const old = cache.get(key);
  if (old) cachedBytes -= old.bytes;
  cache.delete(key);
  const bytes = FIELDS.reduce((n, f) => n + columns[f].byteLength, 0);
  cache.set(key, { version, columns, bytes });
  cachedBytes += bytes;
  for (const [k, v] of cache) {
    if (cachedBytes <= CACHE_BYTES) break;
    cache.delete(k);
    cachedBytes -= v.bytes;
  }
}

/** A written row: its grants, and the instant (microseconds) they were written up to. */
type Stored = { through: number; columns: GrantColumns };

/**
 * The written rows of the endpoints on the days whose `through` is not after `until`, with every
 * field asked, by `endpoint:day`.
 */
async function readStored(db: Db, endpointIds: number[], days: string[], until: Date, need: GrantField[]): Promise<Map<string, Stored>> {
  const out = new Map<string, Stored>();
  // Keyed by the database too: one process may read several (tests do).
  const listed = resultRows<{ endpoint_id: number; day: string; version: string; through: string; db: string }>(
    await db.execute(sql`
      select w.endpoint_id, to_char(w.day, 'YYYY-MM-DD') as day, w.built_at::text as version,
             (extract(epoch from w.through) * 1000000)::bigint::text as through,
             current_database() as db
      from what_if_days w
      where w.endpoint_id = any(${idArray(endpointIds)}) and w.day = any(${sql.raw(`'{${days.join(",")}}'::date[]`)})
        and w.through <= ${until.toISOString()}::timestamptz`),
  );
  const keyOf = (r: { endpoint_id: number; day: string }) => `${listed[0]?.db}:${r.endpoint_id}:${r.day}`;
  const complete = (r: { endpoint_id: number; day: string; version: string }) => {
    const c = cache.get(keyOf(r));
    return c && c.version === r.version && need.every((f) => c.columns[f].length === c.columns.n) ? c : null;
  };
  const missing = listed.filter((r) => !complete(r));
  if (missing.length > 0) {
    const rows = resultRows<StoredRow>(
      await db.execute(sql`
        select w.endpoint_id, to_char(w.day, 'YYYY-MM-DD') as day, w.grants, w.built_at::text as version, w.callers, w.destinations,
               ${sql.join(
                 need.map((f) => sql.raw(`encode(w.${columnOf(f)}, 'base64') as ${columnOf(f)}`)),
                 sql`, `,
               )}
        from what_if_days w
        join unnest(${idArray(missing.map((r) => r.endpoint_id))}, ${sql.raw(`'{${missing.map((r) => r.day).join(",")}}'::date[]`)}) m(e, d)
          on w.endpoint_id = m.e and w.day = m.d`),
    );
    for (const r of rows) {
      const kept = cache.get(keyOf(r));
      remember(keyOf(r), r.version, decodeStored(r, need, kept?.version === r.version ? kept.columns : emptyColumns(0)));
    }
  }
  for (const r of listed) {
    // Rewritten or deleted since the list was read: its grants are read from the reservations.
    const c = complete(r);
    if (!c) continue;
    // Read again: last out of the cache.
    cache.delete(keyOf(r));
    cache.set(keyOf(r), c);
    out.set(`${r.endpoint_id}:${r.day}`, { through: Number(r.through), columns: c.columns });
  }
  return out;
}

/**
 * The grants of the endpoints on the given UTC days ('YYYY-MM-DD', ascending) before `until`:
 * each endpoint's day from its written row up to its `through` (only the fields asked for), the
 * rest from the reservations; several endpoints' grants of a day merged in (created_at, id) order.
 * Days without a grant are left out.
 */
export async function readGrants(db: Db, endpointIds: number[], days: string[], until: Date, fields: Set<GrantField>): Promise<DayGrants[]> {
  const sorted = [...new Set(endpointIds)].sort((a, b) => a - b);
  if (sorted.length === 0 || days.length === 0) return [];
  const bad = days.find((d) => !/^\d{4}-\d\d-\d\d$/.test(d));
  if (bad !== undefined) throw new Error(`a what-if day is YYYY-MM-DD, got '${bad.slice(0, 20)}'`);
  const need = new Set(fields);
  if (sorted.length > 1) need.add("at");
  const stored = await readStored(db, sorted, days, until, [...need]);
  const ranges: Range[] = [];
  for (const day of days) {
    for (const endpointId of sorted) {
      const from = stored.get(`${endpointId}:${day}`)?.through ?? dayStart(day) * 1000;
      const end = Math.min(dayStart(day) + DAY_MS, until.getTime()) * 1000;
      if (from < end) ranges.push({ endpointId, from, until: end });
    }
  }
  const live = await readLive(db, ranges);
  const out: DayGrants[] = [];
  for (const day of days) {
    const parts = sorted
      .map((endpointId) => ({ endpointId, columns: concat(stored.get(`${endpointId}:${day}`)?.columns, live.get(`${endpointId}:${day}`), need) }))
      .filter((p) => p.columns.n > 0);
    if (parts.length === 0) continue;
    out.push({ day, grants: parts.length === 1 ? (parts[0] as { columns: GrantColumns }).columns : await mergeEndpoints(db, parts) });
  }
  return out;
}

/** One endpoint's written grants, then its grants since: the asked fields, one list of names. */
function concat(head: GrantColumns | undefined, tail: GrantColumns | undefined, fields: Set<GrantField>): GrantColumns {
  if (!tail || tail.n === 0) return head ?? emptyColumns(0);
  if (!head || head.n === 0) return tail;
  const c = emptyColumns(0);
  c.n = head.n + tail.n;
  for (const f of fields) {
    const values = new Float64Array(c.n);
    values.set(head[f]);
    if (f === "caller" || f === "destination") {
      const [names, into] = f === "caller" ? [tail.callers, (c.callers = [...head.callers])] : [tail.destinations, (c.destinations = [...head.destinations])];
      const seen = new Map(into.map((name, i) => [name, i]));
      const to = names.map((name) => indexIn(seen, into, name));
      for (let i = 0; i < tail.n; i += 1) values[head.n + i] = to[tail[f][i] ?? 0] ?? 0;
    } else values.set(tail[f], head.n);
    c[f] = values;
  }
  if (!fields.has("caller")) c.callers = head.callers;
  if (!fields.has("destination")) c.destinations = head.destinations;
  return c;
}

/**
 * Several endpoints' grants of one day as one run in (created_at, id) order. Each is in that order
 * already, so they are merged by instant; grants of different endpoints in the same microsecond
 * are ordered by id, read for those instants alone (rare outside a bulk insert).
 */
async function mergeEndpoints(db: Db, parts: { endpointId: number; columns: GrantColumns }[]): Promise<GrantColumns> {
  const columns = parts.map((p) => p.columns);
  const order = mergeOrder(columns, new Map());
  if (order.ties.length === 0) return gather(columns, order.picks);
  const rows = resultRows<{ endpoint_id: number; at: string }>(
    await db.execute(sql`
      select r.endpoint_id, (extract(epoch from r.created_at) * 1000000)::bigint::text as at
      from reservations r
      where r.endpoint_id = any(${idArray(parts.map((p) => p.endpointId))})
        and r.created_at = any(${sql.raw(`array[${order.ties.map((us) => `'${usToIso(us)}'::timestamptz`).join(",")}]`)})
      order by r.created_at, r.id`),
  );
  const byInstant = new Map<number, number[]>();
  const partOf = new Map(parts.map((p, i) => [p.endpointId, i]));
  for (const r of rows) byInstant.set(Number(r.at), [...(byInstant.get(Number(r.at)) ?? []), partOf.get(r.endpoint_id) ?? 0]);
  return gather(columns, mergeOrder(columns, byInstant).picks);
}

function usToIso(us: number): string {
  const ms = Math.floor(us / 1000);
  const micro = String(us - ms * 1000).padStart(3, "0");
  return new Date(ms).toISOString().replace("Z", `${micro}Z`);
}

/**
 * The merged order as (part, index) picks: the earliest instant first; at an instant several parts
 * share, the order `byInstant` gives (parts by id), else the lowest part, and the instant is a tie.
 */
function mergeOrder(parts: GrantColumns[], byInstant: Map<number, number[]>): { picks: Int32Array[]; ties: number[] } {
  const total = parts.reduce((n, p) => n + p.n, 0);
  const partOf = new Int32Array(total);
  const indexOf = new Int32Array(total);
  const heads = parts.map(() => 0);
  const ties: number[] = [];
  for (let k = 0; k < total; k += 1) {
    let best = -1;
    let bestAt = Infinity;
    let shared = false;
    parts.forEach((p, j) => {
      const h = heads[j] ?? 0;
      if (h >= p.n) return;
      const at = p.at[h] ?? Infinity;
      if (at < bestAt) [best, bestAt, shared] = [j, at, false];
      else if (at === bestAt) shared = true;
    });
    if (shared) {
      const seq = byInstant.get(bestAt);
      if (seq && seq.length > 0) best = seq.shift() ?? best;
      else if (ties[ties.length - 1] !== bestAt) ties.push(bestAt);
    }
    partOf[k] = best;
    indexOf[k] = heads[best] ?? 0;
    heads[best] = (heads[best] ?? 0) + 1;
  }
  return { picks: [partOf, indexOf], ties };
}

/** The parts' grants in the picked order, with one list of callers and of destinations. */
function gather(parts: GrantColumns[], [partOf, indexOf]: Int32Array[]): GrantColumns {
  const total = partOf?.length ?? 0;
  const c = emptyColumns(total);
  const callers = new Map<string, number>();
  const destinations = new Map<string, number>();
  const remap = (list: string[], seen: Map<string, number>, into: string[]) => list.map((name) => indexIn(seen, into, name));
  const callerMaps = parts.map((p) => remap(p.callers, callers, c.callers));
  const destinationMaps = parts.map((p) => remap(p.destinations, destinations, c.destinations));
  const numeric = ["at", "amount", "money", "finalUnits", "finalMoney", "free"] as const;
  for (let k = 0; k < total; k += 1) {
    const j = partOf?.[k] ?? 0;
    const i = indexOf?.[k] ?? 0;
    const p = parts[j] as GrantColumns;
    for (const f of numeric) if (p[f].length > 0) c[f][k] = p[f][i] ?? 0;
    if (p.caller.length > 0) c.caller[k] = callerMaps[j]?.[p.caller[i] ?? 0] ?? 0;
    if (p.destination.length > 0) c.destination[k] = destinationMaps[j]?.[p.destination[i] ?? 0] ?? 0;
  }
  return c;
}

/**
 * One endpoint's day written up to the earliest of its end, IN_FLIGHT_MS before now (the
 * database's clock: a reservation's created_at is) and its first held reservation, under the lock
 * a late overrun takes to delete it. Null when that is no later than what is written already
 * (found before the day's grants are read).
 */
async function buildDay(db: Db, endpointId: number, day: string, now: Date): Promise<number | null> {
  return db.transaction(async (tx) => {
    await lockClosedWindows(tx, endpointId);
    const from = new Date(dayStart(day)).toISOString();
    const cap = new Date(Math.min(dayStart(day) + DAY_MS, now.getTime() - IN_FLIGHT_MS)).toISOString();
    // The held reservations are few, and the held partial index finds them without the day's rows.
    const [bound] = resultRows<{ through: string; written: boolean }>(
      await tx.execute(sql`
        with b as (
          select least(${cap}::timestamptz, now() - ${sql.raw(`interval '${IN_FLIGHT_MS / 1000} seconds'`)},
                       coalesce((select min(r.created_at) from reservations r
                                 where r.state = 'held' and r.endpoint_id = ${endpointId}
                                   and r.created_at >= ${from}::timestamptz and r.created_at < ${cap}::timestamptz), ${cap}::timestamptz)) as through)
        select (extract(epoch from b.through) * 1000000)::bigint::text as through,
               b.through <= ${from}::timestamptz or exists (select 1 from what_if_days w where w.endpoint_id = ${endpointId}
                 and w.day = ${day}::date and w.through >= b.through) as written
        from b`),
    );
    if (!bound || bound.written) return null;
    const [d] = resultRows<{ n: number; packed: string | null }>(
      await tx.execute(sql`
        select count(*)::int as n, ${packed} as packed from reservations r
        where r.endpoint_id = ${endpointId} and r.created_at >= ${from}::timestamptz and r.created_at < ${usToIso(Number(bound.through))}::timestamptz`),
    );
    const c = unpack(d?.n ?? 0, d?.packed ?? "");
    const steps = c.at.map((t, i) => t - (i === 0 ? dayStart(day) * 1000 : (c.at[i - 1] ?? 0)));
    await tx.execute(sql`
      insert into what_if_days (endpoint_id, day, grants, through, at, amount, money, final_units, final_money, free, caller, destination, callers, destinations)
      values (${endpointId}, ${day}, ${c.n}, ${usToIso(Number(bound.through))}::timestamptz, ${encodeColumn(steps)}, ${encodeColumn(c.amount)}, ${encodeColumn(c.money)},
              ${encodeColumn(c.finalUnits)}, ${encodeColumn(c.finalMoney)}, ${encodeColumn(c.free)}, ${encodeColumn(c.caller)},
              ${encodeColumn(c.destination)}, ${sql.raw(textArray(c.callers))}, ${sql.raw(textArray(c.destinations))})
      on conflict (endpoint_id, day) do update set
        grants = excluded.grants, through = excluded.through, at = excluded.at, amount = excluded.amount, money = excluded.money,
        final_units = excluded.final_units, final_money = excluded.final_money, free = excluded.free, caller = excluded.caller,
        destination = excluded.destination, callers = excluded.callers, destinations = excluded.destinations, built_at = now()`);
    return c.n;
  });
}

// A text[] literal: each element double-quoted, backslash and quote escaped, then the whole quoted
// as an SQL string. Callers and destinations hold no control character (reserve refuses them).
function textArray(values: string[]): string {
  const body = values.map((v) => `"${v.replaceAll("\\", "\\\\").replaceAll('"', '\\"')}"`).join(",");
  return `'{${body.replaceAll("'", "''")}}'::text[]`;
}

/**
 * Deletes the written days of these endpoints: after reservations are inserted with a creation
 * time in the past (the demo's seed, db:fill), which reserve never does. The worker writes them anew.
 */
export async function forgetLedgerDays(db: Db, endpointIds: number[]): Promise<void> {
  if (endpointIds.length > 0) await db.execute(sql`delete from what_if_days where endpoint_id = any(${idArray(endpointIds)})`);
}

export type WhatIfDaysRun = { written: number; grants: number };

/**
 * Writes, for every endpoint, each day of the last WHAT_IF_DAYS_BACK not written yet (older rows are
 * deleted), and rewrites a day written short of its end once `through` can move
 * WHAT_IF_DAYS_EVERY_MS further (today, or a day a held reservation stopped), until `maxGrants`
 * grants have been read in this run. A day with no reservation is written too: it says there is
 * nothing to read.
 */
export async function buildWhatIfDays(db: Db, now: Date, opts: { endpointIds?: number[]; maxGrants?: number } = {}): Promise<WhatIfDaysRun> {
  const last = utcDay(now.getTime() - IN_FLIGHT_MS);
  const first = utcDay(now.getTime() - WHAT_IF_DAYS_BACK * DAY_MS);
  // Older days are never replayed: their rows go.
  await db.execute(sql`delete from what_if_days where day < ${first}::date`);
  // Dates, not timestamps: a day's end is its UTC midnight whatever the session's time zone.
  const due = resultRows<{ endpoint_id: number; day: string }>(
    await db.execute(sql`
      select e.id as endpoint_id, to_char(d.day, 'YYYY-MM-DD') as day
      from endpoints e
      cross join lateral (select ${first}::date + i as day from generate_series(0, ${last}::date - ${first}::date) i) d
      left join what_if_days w on w.endpoint_id = e.id and w.day = d.day
      where ${opts.endpointIds ? sql`e.id = any(${idArray(opts.endpointIds)})` : sql`true`}
        and (w.endpoint_id is null or (w.through < (d.day + 1)::timestamp at time zone 'UTC'
             and w.through < ${new Date(now.getTime() - IN_FLIGHT_MS - WHAT_IF_DAYS_EVERY_MS).toISOString()}::timestamptz))
      order by d.day desc, e.id`),
  );
  // The cap counts work, not only grants: a day with nothing new or nothing in it still costs a
  // transaction and a look at its held reservations.
  const run: WhatIfDaysRun = { written: 0, grants: 0 };
  let work = 0;
  for (const d of due) {
    if (work >= (opts.maxGrants ?? WHAT_IF_DAYS_GRANTS_A_RUN)) break;
    const n = await buildDay(db, d.endpoint_id, d.day, now);
    work += Math.max(n ?? 0, DAY_WORK);
    if (n !== null) [run.written, run.grants] = [run.written + 1, run.grants + n];
  }
  return run;
}
