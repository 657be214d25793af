import { execFileSync, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { chromium } from "@playwright/test";
import { env } from "@/lib/env";

// Finds a Chromium for the e2e tests without any set-up, in this order: PLAYWRIGHT_CHROMIUM_PATH;
// a browser Playwright installed; the system's Chromium; the one shipped inside the
// @sparticuz/chromium devDependency (unpacked from node_modules, so nothing is downloaded); else
// `npx playwright install chromium`, said out loud. Prints `<path>\t<where it came from>`.

export type Found = { path: string; source: string };

/** A candidate counts only if it runs: a wrapper script whose browser is gone does not. */
export function runs(path: string): boolean {
  if (!existsSync(path)) return false;
  const result = spawnSync(path, ["--version", "--no-sandbox"], { encoding: "utf8", timeout: 20_000 });
  return result.status === 0 && /chrom/i.test(result.stdout);
}

const SYSTEM = ["chromium", "chromium-browser", "google-chrome-stable", "google-chrome"];

function onPath(name: string): string | undefined {
  try {
    return execFileSync("sh", ["-c", `command -v ${name}`], { encoding: "utf8" }).trim() || undefined;
  } catch {
    return undefined;
  }
}

function playwrightInstalled(): string | undefined {
  try {
    return chromium.executablePath();
  } catch {
    return undefined;
  }
}

async function shipped(): Promise<string | undefined> {
  try {
    const { default: packaged } = await import("@sparticuz/chromium");
    return await packaged.executablePath();
  } catch {
    return undefined;
  }
}

export async function findChromium(configured: string | undefined, system = SYSTEM): Promise<Found> {
  if (configured) {
    if (!runs(configured)) throw new Error(`PLAYWRIGHT_CHROMIUM_PATH=${configured} does not run a Chromium`);
    return { path: configured, source: "PLAYWRIGHT_CHROMIUM_PATH" };
  }
  const installed = playwrightInstalled();
  if (installed && runs(installed)) return { path: installed, source: "installed by Playwright" };
  for (const name of system) {
    const found = onPath(name);
    if (found && runs(found)) return { path: found, source: `the system's ${name}` };
  }
  const packaged = await shipped();
  if (packaged && runs(packaged)) return { path: packaged, source: "@sparticuz/chromium (shipped in node_modules)" };
  console.error("find-chromium: no Chromium found; running `npx playwright install chromium` (downloads from Playwright's CDN)");
  execFileSync("npx", ["playwright", "install", "chromium"], { stdio: "inherit" });
  const after = playwrightInstalled();
  if (after && runs(after)) return { path: after, source: "installed just now by `npx playwright install chromium`" };
  throw new Error("no Chromium could be found or installed: set PLAYWRIGHT_CHROMIUM_PATH");
}

if (process.argv[1]?.endsWith("find-chromium.ts")) {
  findChromium(env().PLAYWRIGHT_CHROMIUM_PATH).then(
    (found) => {
      process.stdout.write(`${found.path}\t${found.source}\n`);
    },
    (error: unknown) => {
      console.error(`find-chromium: ${error instanceof Error ? error.message : String(error)}`);
      process.exit(1);
    },
  );
}
