import { readFileSync } from "node:fs";
import { eq, sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { resultRows } from "@/db/client";
import { ceilings, endpoints } from "@/db/schema";
import { skipWithoutDatabase } from "@/db/testing";
import { useTestDatabase } from "@/db/testing-suite";
import { createEndpoint } from "@/lib/ceilings/test-fixtures";

// docs/enforcement.md lists every answer of a reservation in order of precedence. Held to the code
// two ways: the answers the functions can give, in the order they are checked (the list names each,
// and no row's answer is checked before an earlier row's), and requests that hit two conditions at
// once, answered by the earlier row.

type Token = string;

/** The answers a function's text can give, `status code` or `status gate`, in the order they appear. */
function answersIn(text: string): Token[] {
  const out: Token[] = [];
  const pattern = /'status', '(\w+)'(?:,\s*'(?:code|gate)', (?:'(\w+)'|CASE WHEN [^']*'destination' THEN '(\w+)' ELSE '(\w+)' END))?/g;
  for (const m of text.matchAll(pattern)) {
    const [, status, one, first, second] = m;
    if (one) out.push(`${status} ${one}`);
    else if (first && second) out.push(`${status} ${first}`, `${status} ${second}`);
    else out.push(status as string);
  }
  return out;
}

const fn = (name: string) => readFileSync(`db/functions/${name}.sql`, "utf8").replace(/^--.*$/gm, "");

/** reserve_batch with the functions it calls for an answer inlined where it first calls them (reserve_batch_arrays hands any batch but the common one to decide_batch at its start). */
function reserveText(): string {
  let text = fn("reserve_batch");
  for (const called of ["request_error", "input_error", "reserve_batch_arrays", "decide_batch", "parts_error", "replay_answer"])
    text = text.replace(`ceilings.${called}(`, () => `${fn(called)} (`);
  return text;
}

/** The doc's rows: each row's answers, `status code` (granted and resolved alone). */
function documentedRows(): Token[][] {
  const page = readFileSync("docs/enforcement.md", "utf8");
  const section = page.slice(page.indexOf("### Every answer of a reservation"), page.indexOf("What binds a caller"));
  return [...section.matchAll(/^\| \d+ \| (.+?) \|/gm)].map((m) => [...(m[1] ?? "").matchAll(/`([^`]+)`/g)].map((a) => a[1] as string));
}

describe("every answer of a reservation, in order of precedence", () => {
  it("the doc names every answer the functions give, and none is checked before an earlier row's", () => {
    const rows = documentedRows();
    expect(rows.length).toBeGreaterThan(15);
    const rowOf = new Map<Token, number>();
    rows.forEach((answers, row) => answers.forEach((a) => rowOf.has(a) || rowOf.set(a, row)));
    const inCode = answersIn(reserveText());
    expect(new Set(inCode)).toEqual(new Set(rowOf.keys()));
    // First appearances, in code order, never go back to an earlier row.
    const firsts = inCode.filter((a, i) => inCode.indexOf(a) === i).map((a) => ({ answer: a, row: rowOf.get(a) ?? -1 }));
    for (let i = 1; i < firsts.length; i++)
      expect(firsts[i]?.row, `${firsts[i]?.answer} after ${firsts[i - 1]?.answer}`).toBeGreaterThanOrEqual(firsts[i - 1]?.row ?? 0);
  });
});

// Skipped only without a Postgres server to run on; npm test always starts one, and CI fails a skipped suite.
describe.skipIf(skipWithoutDatabase())("requests that hit two rows at once", () => {
  const t = useTestDatabase("enforcement_answer_order");

  const reserve = async (request: Record<string, unknown>) =>
    resultRows<{ a: { status: string; code?: string; gate?: string; replay?: boolean }[] }>(
      await t.db.execute(sql`select ceilings.reserve_batch(${JSON.stringify([request])}::jsonb) as a`),
    )[0]?.a[0];
  const answer = (a: Awaited<ReturnType<typeof reserve>>) => [a?.status, a?.code ?? a?.gate].filter(Boolean).join(" ");

  it("answers the earlier row", async () => {
    const ep = await createEndpoint(t.db, {
      ceilings: [
        { metric: "units", scope: "global", window: "utc_day", value: 2, maxValue: 100, defaultValue: 2 },
        { metric: "units", scope: "caller", window: "utc_day", value: 100, maxValue: 100, defaultValue: 100 },
      ],
    });
    const global = ep.ceilings.find((c) => c.scope === "global");
    const call = { endpoint: ep.key, amount: 1, caller: "acct-a" };
    // 4 before 6: a bad TTL on an unknown endpoint.
    expect(answer(await reserve({ endpoint: "no.such", amount: 1, ttlSeconds: 0 }))).toBe("error invalid_ttl");
    // 12 before 13: a held reservation's key, asked again by an account blocked since.
    const first = await reserve({ ...call, idempotencyKey: "k1" });
    expect(answer(first)).toBe("granted");
    await t.ownerDb.execute(sql`insert into accounts (account, blocked_at, blocked_by, block_reason) values ('acct-a', now(), 'test', 'test')
      on conflict (account) do update set blocked_at = now(), blocked_by = 'test', block_reason = 'test'`);
    expect(await reserve({ ...call, idempotencyKey: "k1" })).toMatchObject({ status: "granted", replay: true });
    // 13 before 14: blocked, and above the per-call max.
    expect(answer(await reserve({ ...call, amount: 5 }))).toBe("refused blocked");
    // 14 before 16: above the per-call max on a killed endpoint.
    await t.ownerDb
      .update(ceilings)
      .set({ value: 0 })
      .where(eq(ceilings.id, global?.id as number));
    expect(answer(await reserve({ ...call, caller: "acct-b", amount: 5 }))).toBe("refused per_call_max");
    // 16 before 18: killed, and past the throttle (a limit of 1 a minute, spent above).
    await t.ownerDb.update(endpoints).set({ throttlePerMinute: 1 }).where(eq(endpoints.id, ep.endpointId));
    expect(answer(await reserve({ ...call, caller: "acct-b" }))).toBe("refused kill_switch");
    // 18 before 19: past the throttle, and the global ceiling (3 a day) spent.
    await t.ownerDb
      .update(ceilings)
      .set({ value: 3 })
      .where(eq(ceilings.id, global?.id as number));
    expect(answer(await reserve({ ...call, caller: "acct-c" }))).toBe("granted");
    expect(answer(await reserve({ ...call, caller: "acct-d" }))).toBe("granted");
    expect(answer(await reserve({ ...call, caller: "acct-c" }))).toBe("refused throttle");
    // 7 before 9: archived, and no caller on an endpoint with a per-caller ceiling.
    await t.ownerDb.update(endpoints).set({ archivedAt: new Date() }).where(eq(endpoints.id, ep.endpointId));
    expect(answer(await reserve({ endpoint: ep.key, amount: 1 }))).toBe("error endpoint_archived");
  });
});
