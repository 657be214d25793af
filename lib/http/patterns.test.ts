import { spawnSync } from "node:child_process";
import { RE2JS } from "re2js";
import { describe, expect, it } from "vitest";
import { openApiDocument } from "./openapi";

// Every pattern of the OpenAPI document, read by the regex engines clients in other languages
// use: RE2 (Go, and re2js here) and Perl (PCRE's dialect: Perl's OpenAPI::Client, PHP, Python's
// re is close). Each compiles, and on every sample each engine answers as ECMAScript does; the
// one difference the dialects keep is written down: Perl and PCRE read `$` as the end or just
// before a final newline, so they take "x\n" where the server refuses it (400), never the reverse.

function patternsOf(value: unknown, out = new Set<string>()): Set<string> {
  if (Array.isArray(value)) for (const v of value) patternsOf(v, out);
  else if (value !== null && typeof value === "object") {
    for (const [k, v] of Object.entries(value)) {
      if (k === "pattern" && typeof v === "string") out.add(v);
      else patternsOf(v, out);
    }
  }
  return out;
}

const SAMPLES = [
  "acct_1",
  "order-7",
  " acct ",
  "acct\t",
  "\u00a0acct\u3000",
  "\ufeffx",
  "a b",
  "日本語",
  "😀",
  "x\u2028",
  "\u2028",
  "",
  " ",
  "\t",
  "a\u0000b",
  "a\u0007",
  "\u001b[0m",
  "a\u007fb",
  "a\u0085",
  "a\u009fb",
  "a\u000bb",
  "\u000bacct",
  "acct\u0085",
  "a\u200bb",
];
const endsWithNewline = (s: string) => s.endsWith("\n");

describe("the OpenAPI document's patterns in other regex dialects", () => {
  const patterns = [...patternsOf(openApiDocument())];

  it("holds patterns, none with a \\u escape", () => {
    expect(patterns.length).toBeGreaterThanOrEqual(4);
    expect(patterns.filter((p) => /\\u/.test(p))).toEqual([]);
  });

  it("RE2 compiles every pattern and matches every sample as ECMAScript does", () => {
    const differences: string[] = [];
    for (const p of patterns) {
      const js = new RegExp(p, "u");
      const re2 = RE2JS.compile(p);
      for (const s of [...SAMPLES, "x\n"]) if (js.test(s) !== re2.matcher(s).find()) differences.push(`${JSON.stringify(p)} on ${JSON.stringify(s)}`);
    }
    expect(differences).toEqual([]);
  });

  it("Perl compiles every pattern and matches every sample as ECMAScript does, but for a final newline", () => {
    const script = `
      use strict; use warnings; use JSON::PP;
      local $/; my $in = JSON::PP->new->utf8->decode(<STDIN>);
      my @rows;
      for my $p (@{$in->{patterns}}) {
        my $re = eval { qr/$p/ } or do { push @rows, { pattern => $p, error => "$@" }; next };
        push @rows, { pattern => $p, matches => [ map { $_ =~ $re ? JSON::PP::true : JSON::PP::false } @{$in->{samples}} ] };
      }
      print JSON::PP->new->utf8->canonical->encode(\\@rows);`;
    const samples = [...SAMPLES, "x\n"];
    const run = spawnSync("perl", ["-e", script], { input: JSON.stringify({ patterns, samples }), encoding: "utf8" });
    expect(run.status, run.stderr).toBe(0);
    const rows = JSON.parse(run.stdout) as { pattern: string; error?: string; matches?: boolean[] }[];
    expect(rows.filter((r) => r.error)).toEqual([]);
    const differences: string[] = [];
    for (const row of rows) {
      const js = new RegExp(row.pattern, "u");
      samples.forEach((s, i) => {
        const perl = row.matches?.[i];
        if (perl === js.test(s)) return;
        // The documented difference: Perl's $ also matches before a final newline.
        if (endsWithNewline(s) && perl === true && js.test(s.slice(0, -1))) return;
        differences.push(`${JSON.stringify(row.pattern)} on ${JSON.stringify(s)}: Perl ${perl}`);
      });
    }
    expect(differences).toEqual([]);
  });
});
