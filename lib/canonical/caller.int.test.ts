import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { resultRows } from "@/db/client";
import { skipWithoutDatabase } from "@/db/testing";
import { useTestDatabase } from "@/db/testing-suite";
import { canonicalCaller } from "./caller";

// ceilings.canonical_caller and canonicalCaller are twins: a caller the library trims one way and
// a SQL caller's batch trims another would be two accounts with two counters. The SQL one lists its
// whitespace as characters (btrim), so every code point of the Basic Multilingual Plane is held to
// the library's answer at both ends and inside, not only the ones a list remembers.

describe.skipIf(skipWithoutDatabase())("ceilings.canonical_caller", () => {
  const t = useTestDatabase("canonical_caller", { max: 1 });

  it("trims exactly what the library trims, for every BMP code point, at either end and twice", async () => {
    const raws: string[] = [];
    for (let cp = 1; cp <= 0xffff; cp++) {
      if (cp >= 0xd800 && cp <= 0xdfff) continue; // a lone surrogate is no character
      const c = String.fromCharCode(cp);
      raws.push(`${c}a${c}`, `${c}${c}b`, `a${c}b`);
    }
    const rows = resultRows<{ raw: string; canonical: string | null }>(
      await t.db.execute(sql`select raw, ceilings.canonical_caller(raw) as canonical from jsonb_array_elements_text(${JSON.stringify(raws)}::jsonb) as raw`),
    );
    const differ = rows.filter((r) => (r.canonical ?? "") !== canonicalCaller(r.raw));
    expect(rows).toHaveLength(raws.length);
    expect(differ.slice(0, 5)).toEqual([]);
  });

  it("answers no caller for whitespace alone and keeps what is inside", async () => {
    const rows = resultRows<{ a: string | null; b: string | null; c: string | null }>(
      await t.db.execute(
        sql`select ceilings.canonical_caller(${"\u3000 \t\u2005\u000b"}) as a, ceilings.canonical_caller(${" a \u00a0 b\u2028"}) as b, ceilings.canonical_caller(null) as c`,
      ),
    );
    expect(rows[0]).toEqual({ a: null, b: "a \u00a0 b", c: null });
  });
});
