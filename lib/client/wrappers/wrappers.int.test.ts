import { execFile, execFileSync } from "node:child_process";
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { sql } from "drizzle-orm";
import { SMTPServer } from "smtp-server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningApiServer, startApiServer } from "@/app/api/v1/_lib/api-server";
import { makeKey } from "@/app/api/v1/_lib/test-support";
import { resultRows } from "@/db/client";
import { skipWithoutDatabase } from "@/db/testing";
import { useTestDatabase } from "@/db/testing-suite";
import { makeBudget, priceEndpoint } from "@/lib/enforcement/budget-fixtures";
import { makeEndpoint } from "@/lib/enforcement/test-fixtures";
import { type Billed, type FakeProviders, startFakeProviders } from "./fake-providers";

// The wrappers as a team gets them: the packed @ceilings/client installed with the real SDKs
// (openai, @anthropic-ai/sdk, ai, twilio, nodemailer) into a project outside this repository, run
// by Node against local servers speaking each provider's wire format (fake-providers.ts, a real
// SMTP server), reserving through the real HTTP API on a real Postgres. What each call settled is
// read from the ledger and held to what the fake billed, part by part, to the micro.

const execFileAsync = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, "../../..");
const SDKS = [
  "openai",
  "@anthropic-ai/sdk",
  "ai",
  "@ai-sdk/openai-compatible",
  "@ai-sdk/openai",
  "twilio",
  "nodemailer",
  "gpt-tokenizer",
  "@types/node",
  "@types/nodemailer",
];

type Outcome = { name: string; caller: string; ok: boolean; error?: { name?: string; message?: string; gate?: string; cause?: string } };
type Row = {
  state: string;
  parts: Record<string, number> | null;
  amount: number;
  settled_parts: Record<string, number> | null;
  settled_amount: number | null;
  settled_money: number | null;
  destination: string | null;
};

// Prices in picodollars a unit: whole micros for every count, so the money compares exactly.
const OAI_PRICES = { input: 2_000_000, cached_input: 1_000_000, output: 8_000_000 };
const ANT_PRICES = { input: 3_000_000, cache_write: 4_000_000, cache_read: 1_000_000, output: 15_000_000 };
const AI_PRICES = { input: 2_000_000, cache_read: 1_000_000, cache_write: 3_000_000, output: 8_000_000 };
const SMS_PRICE = 7_900_000_000;
const CONC_PRICES = { input: 1_000_000, cached_input: 1_000_000, output: 2_000_000 };
/** The concurrency endpoint's worst case: 100 input tokens (maxInputTokens) and 50 output at 1 and 2 micros. */
const CONC_WORST = 100 * 1 + 50 * 2;

const money = (parts: Record<string, number>, prices: Record<string, number>) =>
  Object.entries(parts).reduce((sum, [k, n]) => sum + (n * (prices[k] ?? NaN)) / 1_000_000, 0);

describe.skipIf(skipWithoutDatabase())("SDK wrappers from the packed client, against the providers' wire formats", () => {
  const t = useTestDatabase("wrappers", { max: 10 });
  let api: RunningApiServer;
  let fakes: FakeProviders;
  let smtp: { port: number; received: { to: string[]; subject: string }[]; close: () => Promise<void> };
  let project: string;
  let env: Record<string, string> & { NODE_ENV: "production" };
  const ids: Record<string, number> = {};

  beforeAll(async () => {
    api = await startApiServer({ deps: { db: async () => t.db }, port: 0, host: "127.0.0.1" });
    fakes = await startFakeProviders();
    smtp = await startSmtp();
    const units = [{ metric: "units", scope: "global", window: "utc_day", value: 100_000_000 }] as const;
    const oai = await makeEndpoint(t.db, { ceilings: [...units] });
    const ant = await makeEndpoint(t.db, { ceilings: [...units] });
    const ai = await makeEndpoint(t.db, { ceilings: [...units] });
    const cooldown = (kind: "phone" | "email") =>
      ({ metric: "calls", scope: "destination", window: "first_hit", windowSeconds: 3600, value: 1, destinationKind: kind }) as const;
    const sms = await makeEndpoint(t.db, {
      perCallMax: 10,
      ceilings: [{ metric: "units", scope: "global", window: "utc_day", value: 1000 }, cooldown("phone")],
    });
    const mail = await makeEndpoint(t.db, {
      perCallMax: 1,
      ceilings: [{ metric: "units", scope: "global", window: "utc_day", value: 1000 }, cooldown("email")],
    });
    const conc = await makeEndpoint(t.db, { ceilings: [...units] });
    await priceEndpoint(t.db, oai.endpointId, OAI_PRICES);
    await priceEndpoint(t.db, ant.endpointId, ANT_PRICES);
    await priceEndpoint(t.db, ai.endpointId, AI_PRICES);
    await priceEndpoint(t.db, sms.endpointId, { units: SMS_PRICE });
    await priceEndpoint(t.db, mail.endpointId, { units: 1_000_000_000 });
    await priceEndpoint(t.db, conc.endpointId, CONC_PRICES);
    // Room for exactly 20 worst cases, not 21.
    const budget = await makeBudget(t.db, { endpointIds: [conc.endpointId], value: 20 * CONC_WORST + CONC_WORST - 1 });
    Object.assign(ids, { oai: oai.endpointId, conc: conc.endpointId, budget: budget.id });
    const key = await makeKey(t.db, { endpoints: [oai.key, ant.key, ai.key, sms.key, mail.key, conc.key], trusted: true });

    const tarball = execFileSync("npm", ["run", "-s", "build:client"], { cwd: ROOT, encoding: "utf8" }).trim().split("\n").pop() ?? "";
    project = mkdtempSync(path.join(tmpdir(), "ceilings-wrappers-user-"));
    const dev = JSON.parse(readFileSync(path.join(ROOT, "package.json"), "utf8")) as {
      devDependencies: Record<string, string>;
      dependencies: Record<string, string>;
    };
    const version = (name: string) => dev.devDependencies[name] ?? dev.dependencies[name];
    writeFileSync(path.join(project, "package.json"), JSON.stringify({ name: "some-service", version: "1.0.0", private: true, type: "module" }));
    // The SDKs at this repository's versions (from npm's cache when it has them), and the tarball.
    await execFileAsync(
      "npm",
      ["install", "--no-audit", "--no-fund", "--no-package-lock", "--prefer-offline", tarball, ...SDKS.map((s) => `${s}@${version(s)}`)],
      { cwd: project },
    );
    copyFileSync(path.join(import.meta.dirname, "scratch", "scenarios.mjs"), path.join(project, "scenarios.mjs"));
    env = {
      NODE_ENV: "production",
      // eslint-disable-next-line no-restricted-syntax -- only PATH: the service knows nothing of this repository
      PATH: process.env.PATH ?? "",
      CEILINGS_URL: api.url,
      API_KEY: key.secret,
      PROVIDER_URL: fakes.url,
      SMTP_PORT: String(smtp.port),
      E_OAI: oai.key,
      E_ANT: ant.key,
      E_AI: ai.key,
      E_SMS: sms.key,
      E_MAIL: mail.key,
      E_CONC: conc.key,
    };
  }, 240_000);
  afterAll(async () => {
    await api?.close();
    await fakes?.close();
    await smtp?.close();
    if (project) rmSync(project, { recursive: true, force: true });
  });

  async function scenarios(...args: string[]): Promise<Outcome[]> {
    const { stdout } = await execFileAsync(process.execPath, ["scenarios.mjs", ...args], { cwd: project, env, maxBuffer: 1 << 24 });
    return stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as Outcome);
  }
  const reservationsOf = async (caller: string): Promise<Row[]> =>
    resultRows<Row>(
      await t.db.execute(
        sql`select state, parts, amount::float8 as amount, settled_parts, settled_amount::float8 as settled_amount, settled_money::float8 as settled_money, destination from reservations where caller = ${caller} order by created_at`,
      ),
    );
  const billedOf = (scenario: string): Billed[] => fakes.billed.filter((b) => b.scenario === scenario);

  it("type-checks every example of docs/calling.md's wrappers and the README's tour against the installed SDKs", async () => {
    const page = readFileSync(path.join(ROOT, "docs", "calling.md"), "utf8");
    const section = page.slice(page.indexOf("## Wrap the SDK you already call"), page.indexOf("## Four ways to ask"));
    const readme = readFileSync(path.join(ROOT, "README.md"), "utf8");
    const tour = [...readme.matchAll(/```ts\n([\s\S]*?)```/g)]
      .map((m) => (m[1] ?? "").replace(/^ {3}/gm, ""))
      .filter((code) => code.includes("@ceilings/client/"));
    const examples = [...[...section.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1] ?? ""), ...tour];
    expect(examples).toHaveLength(6);
    const files = examples.map((code, i) => {
      const file = `example-${i}.ts`;
      writeFileSync(path.join(project, file), `${code}\nexport {};\n`);
      return file;
    });
    const tsc = path.join(ROOT, "node_modules", "typescript", "bin", "tsc");
    const flags = [
      "--noEmit",
      "--strict",
      "--skipLibCheck",
      "--target",
      "es2022",
      "--module",
      "nodenext",
      "--moduleResolution",
      "nodenext",
      "--lib",
      "es2022,dom",
      "--types",
      "node",
    ];
    await execFileAsync(process.execPath, [tsc, ...flags, ...files], { cwd: project }).catch((error: { stdout?: string }) => {
      throw new Error(`the examples do not type-check:\n${error.stdout ?? String(error)}`);
    });
  }, 120_000);

  it("settles every finished model call at what the provider billed, part by part and to the micro", async () => {
    const cases = {
      "oai-chat": OAI_PRICES,
      "oai-chat-cached": OAI_PRICES,
      "oai-chat-stream": OAI_PRICES,
      "oai-chat-429once": OAI_PRICES,
      "oai-responses": OAI_PRICES,
      "oai-responses-stream": OAI_PRICES,
      "ant-create": ANT_PRICES,
      "ant-create-cachewrite": ANT_PRICES,
      "ant-create-cacheread": ANT_PRICES,
      "ant-create-stream": ANT_PRICES,
      "ant-stream": ANT_PRICES,
      "ai-generate": AI_PRICES,
      "ai-stream": AI_PRICES,
    } as const;
    const outcomes = await scenarios(...Object.keys(cases));
    for (const o of outcomes) expect(o, o.name).toMatchObject({ ok: true });
    for (const [name, prices] of Object.entries(cases)) {
      const billed = billedOf(name);
      expect(billed, name).toHaveLength(1);
      const [{ parts: provider }] = billed as [Billed];
      // The AI SDK names OpenAI's cached input cacheRead.
      const expected: Record<string, number> = name.startsWith("ai-")
        ? { input: provider.input ?? NaN, cache_read: provider.cached_input ?? NaN, cache_write: 0, output: provider.output ?? NaN }
        : provider;
      const rows = await reservationsOf(name);
      expect(rows, name).toHaveLength(1);
      const [row] = rows as [Row];
      expect(row.state, name).toBe("settled");
      expect(row.settled_parts, name).toEqual(expected);
      expect(row.settled_money, name).toBe(money(expected, prices));
      // The worst case held every part billed: the reservation was never below the bill.
      expect(money(row.parts ?? {}, prices), name).toBeGreaterThanOrEqual(money(expected, prices));
    }
    // Cached input and Anthropic's cache parts were billed and settled as their own parts.
    expect((await reservationsOf("oai-chat-cached"))[0]?.settled_parts?.cached_input).toBeGreaterThan(0);
    expect((await reservationsOf("ant-create-cachewrite"))[0]?.settled_parts?.cache_write).toBeGreaterThan(0);
    // A request marked cache_control reserves its input as a cache write, the dearer part.
    expect((await reservationsOf("ant-create-cachewrite"))[0]?.parts).toMatchObject({ input: 0, cache_read: 0 });
    expect((await reservationsOf("ant-create-cacheread"))[0]?.settled_parts?.cache_read).toBeGreaterThan(0);
  }, 120_000);

  it("a stream cut short never settles below what it reported; an error before any token releases; no bound, no call", async () => {
    const outcomes = Object.fromEntries(
      (
        await scenarios(
          "oai-chat-stream-break",
          "oai-chat-stream-error",
          "oai-chat-stream-abandon",
          "oai-idem",
          "ant-stream-break",
          "ant-stream-error",
          "ai-stream-break",
          "oai-chat-429",
          "ant-429",
          "oai-no-max",
        )
      ).map((o) => [o.name, o]),
    );
    expect(outcomes["oai-chat-stream-abandon"]).toMatchObject({ ok: true });
    for (const name of ["oai-chat-stream-break", "oai-chat-stream-error", "ant-stream-break", "ant-stream-error", "oai-chat-429", "ant-429", "oai-no-max"])
      expect(outcomes[name], name).toMatchObject({ ok: false });
    // OpenAI reports usage only at the end: cut or abandoned, the reservation keeps its worst case.
    for (const name of ["oai-chat-stream-break", "oai-chat-stream-error", "oai-chat-stream-abandon", "ai-stream-break"]) {
      const [row, ...more] = await reservationsOf(name);
      expect(more, name).toHaveLength(0);
      expect(row?.state, name).toBe("settled");
      expect(row?.settled_parts, name).toEqual(row?.parts);
      for (const b of billedOf(name)) expect(row?.settled_parts?.output, name).toBeGreaterThanOrEqual(b.parts.output ?? Infinity);
    }
    // Anthropic reported its input when the stream started: that is settled, the output at max_tokens.
    for (const name of ["ant-stream-break", "ant-stream-error"]) {
      const [row] = await reservationsOf(name);
      const [billed] = billedOf(name);
      expect(billed?.complete, name).toBe(false);
      expect(row?.state, name).toBe("settled");
      expect(row?.settled_parts, name).toEqual({ ...billed?.parts, output: 64 });
    }
    // Rate limited by the provider on every attempt: nothing was generated, the reservation is released.
    for (const name of ["oai-chat-429", "ant-429"]) {
      expect(billedOf(name), name).toHaveLength(0);
      expect(
        (await reservationsOf(name)).map((r) => r.state),
        name,
      ).toEqual(["released"]);
    }
    expect(outcomes["oai-no-max"]?.error).toMatchObject({ name: "WorstCaseError" });
    // A retry with the call's idempotency key after it settled: refused as already resolved, never sent twice.
    expect(outcomes["oai-idem"]).toMatchObject({ ok: false, error: { name: "ConflictError" } });
    expect(billedOf("oai-idem")).toHaveLength(1);
    expect((await reservationsOf("oai-idem")).map((r) => r.state)).toEqual(["settled"]);
    expect(await reservationsOf("oai-no-max")).toHaveLength(0);
    expect(billedOf("oai-no-max")).toHaveLength(0);
  }, 120_000);

  it("reserves SMS at its segments per recipient, settles at Twilio's count, and the cooldown refuses a repeat", async () => {
    const outcomes = Object.fromEntries((await scenarios("sms-gsm", "sms-long", "sms-ucs2", "sms-smart", "sms-cooldown")).map((o) => [o.name, o]));
    const expected = { "sms-gsm": [1, 1], "sms-long": [2, 2], "sms-ucs2": [2, 2], "sms-smart": [2, 1] } as const;
    for (const [name, [reserved, settled]] of Object.entries(expected)) {
      expect(outcomes[name], JSON.stringify(outcomes[name])).toMatchObject({ ok: true });
      const [row] = await reservationsOf(name);
      expect({ amount: row?.amount, settled: row?.settled_amount, money: row?.settled_money }, name).toEqual({
        amount: reserved,
        settled,
        money: (settled * SMS_PRICE) / 1_000_000,
      });
      expect(
        billedOf(name).map((b) => b.parts.units),
        name,
      ).toEqual([settled]);
      expect(row?.destination, name).toMatch(/^\+1415555010/);
    }
    expect(outcomes["sms-cooldown"]).toMatchObject({ ok: false, error: { name: "CeilingsRefusedError", gate: "cooldown" } });
    expect(billedOf("sms-cooldown")).toHaveLength(1);
  }, 120_000);

  it("reserves e-mail per recipient, all or none: one refused recipient releases the others and nothing is sent", async () => {
    const outcomes = Object.fromEntries((await scenarios("mail-many", "mail-all-or-none")).map((o) => [o.name, o]));
    expect(outcomes["mail-many"]).toMatchObject({ ok: true });
    const many = await reservationsOf("mail-many");
    expect(many.map((r) => [r.destination, r.state, r.settled_amount]).sort()).toEqual([
      ["ada@example.com", "settled", 1],
      ["grace@example.com", "settled", 1],
      ["lin@example.com", "settled", 1],
    ]);
    expect(outcomes["mail-all-or-none"]).toMatchObject({ ok: false, error: { name: "CeilingsRefusedError", gate: "cooldown" } });
    expect((await reservationsOf("mail-all-or-none")).map((r) => [r.destination, r.state])).toEqual([
      ["once@example.com", "settled"],
      ["fresh@example.com", "released"],
    ]);
    expect(smtp.received.filter((m) => m.subject.includes("mail-all-or-none")).map((m) => m.to)).toEqual([["once@example.com"]]);
    expect(smtp.received.filter((m) => m.subject.includes("mail-many")).map((m) => m.to.sort())).toEqual([
      ["ada@example.com", "grace@example.com", "lin@example.com"],
    ]);
  }, 120_000);

  it("64 wrapped calls at once from two processes against a budget with room for 20 grant exactly 20", async () => {
    const runs = [scenarios("--parallel", "conc", "32", "conc-a"), scenarios("--parallel", "conc", "32", "conc-b")];
    // The provider answers only once every decision is in, so no settle frees room mid-run.
    const deadline = Date.now() + 60_000;
    let stableSince = Date.now();
    let last = -1;
    while (Date.now() < deadline) {
      const held = fakes.held();
      if (held !== last) [last, stableSince] = [held, Date.now()];
      if (held >= 20 && Date.now() - stableSince > 1500) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    fakes.release();
    const outcomes = (await Promise.all(runs)).flat();
    expect(outcomes).toHaveLength(64);
    expect(outcomes.filter((o) => o.ok)).toHaveLength(20);
    expect(outcomes.filter((o) => !o.ok).map((o) => `${o.error?.name}:${o.error?.gate}`)).toEqual(Array(44).fill("CeilingsRefusedError:budget"));
    expect(fakes.billed.filter((b) => b.scenario.startsWith("conc-"))).toHaveLength(20);
    const rows = resultRows<{ settled: number; money: number }>(
      await t.db.execute(
        sql`select count(*)::int as settled, coalesce(sum(settled_money), 0)::int as money from reservations where endpoint_id = ${ids.conc} and state = 'settled'`,
      ),
    );
    const billedMoney = fakes.billed.filter((b) => b.scenario.startsWith("conc-")).reduce((sum, b) => sum + money(b.parts, CONC_PRICES), 0);
    expect(rows[0]).toEqual({ settled: 20, money: billedMoney });
  }, 120_000);
});

async function startSmtp() {
  const received: { to: string[]; subject: string }[] = [];
  const server = new SMTPServer({
    disabledCommands: ["STARTTLS", "AUTH"],
    authOptional: true,
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on("data", (c: Buffer) => chunks.push(c));
      stream.on("end", () => {
        const subject = /^Subject: (.*)$/m.exec(Buffer.concat(chunks).toString("utf8"))?.[1] ?? "";
        received.push({ to: session.envelope.rcptTo.map((r) => r.address), subject });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  return { port, received, close: () => new Promise<void>((r) => server.close(() => r())) };
}
