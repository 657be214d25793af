// Follows the documentation's walkthroughs on a fresh database, so their commands cannot rot:
//   npx tsx scripts/docs-walkthrough.ts          (needs TEST_DATABASE_URL; npm test runs it through
//                                                 scripts/docs-walkthrough.int.test.ts)
//
// A walkthrough is a page's code blocks whose info string says `walkthrough`, run in order:
//   ```sh walkthrough                 run by bash (errexit, pipefail), one shell per page, so
//                                     variables carry from block to block; every line
//                                     `# → text` under a command is text the block's output
//                                     (stdout and stderr) must contain, in that order
//   ```ts walkthrough file=x.ts       written to x.ts before the next block runs
// Blocks without `walkthrough` are shown, not run (a build, a browser step, a placeholder host).
//
// The commands run in a scratch folder that stands in for a checkout: the project's folders and
// package.json are linked into it, so `npm run …` works and the files a walkthrough writes
// (ceilings.json, a script) land in the scratch folder, never in the project. The environment:
//   MIGRATION_DATABASE_URL  the fresh database, as its owner
//   DATABASE_URL            the same database as a least-privilege app role (granted by db:migrate)
//   NEXTAUTH_SECRET         random
//   CEILINGS_URL            the HTTP API: the API server of `npm run api` on a loopback port
//                           (app/api/v1/_lib/api-server.ts), on the same database
//   CEILINGS_KEY            an API key for sms.otp, account acct_42 (the dashboard's API keys step)
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { openPostgres, type Database } from "@/db/client";
import { createTestDatabase, roleUrl, TEST_APP_ROLE, type TestDatabase } from "@/db/testing";
import { createApiKey } from "@/lib/api-keys";
import { type RunningApiServer, startApiServer } from "@/app/api/v1/_lib/api-server";

const ROOT = path.resolve(import.meta.dirname, "..");

/** The walkthrough pages, in the order a newcomer follows them: each builds on the one before. */
export const WALKTHROUGH_PAGES = ["docs/your-endpoint.md", "docs/calling.md"] as const;

export type Block = {
  page: string;
  /** 1-based line of the opening fence. */
  line: number;
  lang: string;
  /** For a file block: where the block is written. */
  file?: string;
  code: string;
  /** For a shell block: text its output must contain, in order. */
  expects: string[];
};

const FENCE = /^(\s*)(`{3,})(.*)$/;

/** Every fenced code block of a page whose info string has the word `walkthrough`. */
export function walkthroughBlocks(markdown: string, page: string): Block[] {
  const lines = markdown.split("\n");
  const blocks: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = FENCE.exec(lines[i] ?? "");
    if (!open) continue;
    const [, , ticks = "```", info = ""] = open;
    let end = i + 1;
    while (end < lines.length && !new RegExp(`^\\s*${ticks}\\s*$`).test(lines[end] ?? "")) end++;
    const words = info.trim().split(/\s+/);
    if (words.includes("walkthrough")) {
      const code = lines.slice(i + 1, end).join("\n");
      const file = words.find((w) => w.startsWith("file="))?.slice("file=".length);
      const lang = words[0] ?? "";
      if (lang !== "sh" && !file) throw new Error(`${page}:${i + 1}: a walkthrough block is \`sh\` or names its file=`);
      const expects = lang === "sh" && !file ? [...code.matchAll(/^\s*# → (.+)$/gm)].map((m) => (m[1] ?? "").trim()) : [];
      blocks.push({ page, line: i + 1, lang, file, code, expects });
    }
    i = end;
  }
  return blocks;
}

/** A folder that behaves like a checkout of the project for `npm run` and `npx tsx`. */
function scratchCheckout(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), "ceilings-walkthrough-"));
  const linked = ["app", "components", "db", "lib", "scripts", "public", "node_modules", "package.json", "package-lock.json"];
  const present = new Set(readdirSync(ROOT));
  for (const name of linked) if (present.has(name)) symlinkSync(path.join(ROOT, name), path.join(dir, name));
  // `@/…` resolves into the project from here, and `@ceilings/client` to its source.
  writeFileSync(
    path.join(dir, "tsconfig.json"),
    JSON.stringify({
      extends: path.join(ROOT, "tsconfig.json"),
      compilerOptions: { paths: { "@/*": [`${ROOT}/*`], "@ceilings/client": [`${ROOT}/lib/client/index.ts`] } },
    }),
  );
  return dir;
}

export type PageRun = { page: string; output: string; failure?: string };

const MARK = "@@walkthrough-block";
const HEREDOC_END = "@@WALKTHROUGH_FILE_END";

/** Runs one page's blocks in one bash process; the first failing block or unmet expectation fails it. */
async function runPage(page: string, blocks: Block[], cwd: string, env: NodeJS.ProcessEnv, log: (line: string) => void): Promise<PageRun> {
  const script: string[] = ["set -euo pipefail"];
  blocks.forEach((b, n) => {
    // On a line of its own even after output without a final newline (curl's).
    script.push(`printf '\\n${MARK} ${n}\\n'`);
    if (b.file) {
      // Written in its place in the sequence: a later block may rewrite it, an earlier one not see it.
      if (!/^[\w.-]+$/.test(b.file) || b.code.includes(HEREDOC_END)) throw new Error(`${b.page}:${b.line}: cannot write file=${b.file}`);
      script.push(`cat > '${b.file}' <<'${HEREDOC_END}'`, b.code, HEREDOC_END);
    } else {
      script.push("{", b.code, "} 2>&1");
    }
  });
  script.push(`printf '\\n${MARK} done\\n'`);
  log(`walkthrough: ${page} (${blocks.length} blocks)`);
  const output = await new Promise<string>((resolve, reject) => {
    const child = spawn("bash", ["-c", script.join("\n")], { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
    let text = "";
    child.stdout.on("data", (chunk: Buffer) => (text += chunk.toString("utf8")));
    child.stderr.on("data", (chunk: Buffer) => (text += chunk.toString("utf8")));
    child.on("error", reject);
    child.on("close", () => resolve(text));
  });
  const parts = output.split(new RegExp(`^${MARK} `, "m"));
  const outputs = new Map<string, string>();
  for (const part of parts.slice(1)) {
    const newline = part.indexOf("\n");
    outputs.set(part.slice(0, newline === -1 ? undefined : newline), newline === -1 ? "" : part.slice(newline + 1));
  }
  for (const [n, b] of blocks.entries()) {
    const where = `${b.page}:${b.line}`;
    const seen = outputs.get(String(n));
    if (seen === undefined) return { page, output, failure: `${where}: the walkthrough stopped before this block` };
    const ranToEnd = outputs.has(String(n + 1)) || (n === blocks.length - 1 && outputs.has("done"));
    if (!ranToEnd) return { page, output, failure: `${where}: a command failed (bash -e):\n${b.code}\n--- output ---\n${seen}` };
    let from = 0;
    for (const expected of b.expects) {
      const at = seen.indexOf(expected, from);
      if (at === -1)
        return { page, output, failure: `${where}: expected the output to contain (after what came before)\n  ${expected}\n--- output ---\n${seen}` };
      from = at + expected.length;
    }
  }
  return { page, output };
}

export type WalkthroughResult = { runs: PageRun[]; blocks: Block[] };

/** What the walkthroughs call, as a reader would (.ci/run installs what CI lacks). */
export const WALKTHROUGH_TOOLS = ["bash", "npm", "npx", "psql", "curl", "python3", "node"] as const;

function missingTools(): string[] {
  const dirs = (process.env.PATH ?? "").split(path.delimiter).filter(Boolean);
  return WALKTHROUGH_TOOLS.filter((tool) => !dirs.some((dir) => existsSync(path.join(dir, tool))));
}

/**
 * Follows every walkthrough page on a fresh database of the TEST_DATABASE_URL server (created
 * unmigrated: the walkthrough migrates it) and drops it afterwards.
 */
export async function runWalkthroughs(options: { log?: (line: string) => void; pages?: readonly string[] } = {}): Promise<WalkthroughResult> {
  const log = options.log ?? ((line: string) => console.log(line));
  const pages = options.pages ?? WALKTHROUGH_PAGES;
  const missing = missingTools();
  if (missing.length > 0) throw new Error(`the documentation's walkthroughs need ${missing.join(", ")} on PATH`);
  const blocks = pages.flatMap((page) => walkthroughBlocks(readFileSync(path.join(ROOT, page), "utf8"), page));
  const cwd = scratchCheckout();
  let database: TestDatabase | undefined;
  let app: Database | undefined;
  let server: RunningApiServer | undefined;
  const runs: PageRun[] = [];
  try {
    database = await createTestDatabase("walkthrough", { migrate: false, max: 2 });
    const appUrl = roleUrl(database.url, TEST_APP_ROLE);
    // A newcomer's shell: nothing of this process's environment but PATH and HOME.
    const env: NodeJS.ProcessEnv = {
      NODE_ENV: "development",
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HOME: process.env.HOME ?? cwd,
      LANG: "C.UTF-8",
      MIGRATION_DATABASE_URL: database.url,
      DATABASE_URL: appUrl,
      NEXTAUTH_SECRET: randomBytes(32).toString("base64"),
      DATA_DIR: path.join(cwd, ".data"),
      NEXT_TELEMETRY_DISABLED: "1",
      npm_config_update_notifier: "false",
      npm_config_fund: "false",
    };
    for (const page of pages) {
      if (page === "docs/calling.md") {
        // The dashboard's steps before calling: an API key for the endpoint the first page made,
        // and a server answering the HTTP API on the same database.
        app = openPostgres(appUrl, { max: 4 });
        const appDb = app.db;
        const key = await createApiKey(appDb, {
          name: "walkthrough",
          binding: { kind: "account", account: "acct_42" },
          endpointKeys: ["sms.otp"],
          actor: { type: "system", name: "walkthrough" },
        });
        server = await startApiServer({ deps: { db: async () => appDb }, port: 0, host: "127.0.0.1" });
        env.CEILINGS_URL = server.url;
        env.CEILINGS_KEY = key.secret;
      }
      const run = await runPage(
        page,
        blocks.filter((b) => b.page === page),
        cwd,
        env,
        log,
      );
      runs.push(run);
      if (run.failure) break;
    }
  } finally {
    await server?.close();
    await app?.close();
    await database?.drop();
    rmSync(cwd, { recursive: true, force: true });
  }
  return { runs, blocks };
}

if (process.argv[1]?.endsWith("docs-walkthrough.ts")) {
  runWalkthroughs().then(
    ({ runs }) => {
      const failed = runs.filter((r) => r.failure);
      for (const r of runs) console.log(`${r.failure ? "FAILED" : "ok    "} ${r.page}`);
      for (const r of failed) console.error(`\n${r.failure}`);
      process.exit(failed.length > 0 || runs.length < WALKTHROUGH_PAGES.length ? 1 : 0);
    },
    (error: unknown) => {
      console.error(`docs-walkthrough: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
      process.exit(1);
    },
  );
}
