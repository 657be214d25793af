// npm run docs:screenshots -- --url http://127.0.0.1:3000: the README's screenshots (the
// overview, an endpoint page, the budgets and an account's page) of a running demo (`npm run demo`), signed in as the demo's
// admin, 1280 px wide, into docs/images/. The browser is the e2e suite's (scripts/find-chromium.ts).
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import { chromium } from "@playwright/test";
import { env } from "@/lib/env";
import { findChromium } from "./find-chromium";

// The overview whole; the endpoint page's top (plan, ceilings, throttle, the first chart); the budgets
// whole; an account's page's top (plan, what binds it, spend, refusals); a change request; an
// endpoint's readiness card and reconciliation section.
const SHOTS = [
  { file: "overview.png", path: "/", height: undefined },
  { file: "endpoint.png", path: "/endpoints/email.subscribe", height: 1720 },
  { file: "budgets.png", path: "/budgets", height: undefined },
  { file: "account.png", path: "/accounts/acct_4amezdg4", height: 1600 },
  // The raise the demo seeds, waiting for a second admin (lib/demo/changes.ts): the first request.
  { file: "change-request.png", path: "/changes/1", height: undefined },
  // The demo's reconciliation (lib/demo/reconciliation.ts): the endpoint's readiness card, and
  // billed beside charged with the day a resend path bypassed Ceilings.
  { file: "readiness.png", path: "/endpoints/email.subscribe", selector: "#readiness" },
  { file: "reconciliation.png", path: "/endpoints/email.subscribe", selector: "#reconciliation" },
] as const satisfies readonly { file: string; path: string; height?: number; selector?: string }[];

/** A palette PNG (about a third of the size) through sharp, Next's image library, when it is installed. */
async function compress(png: Buffer): Promise<Buffer> {
  try {
    const { default: sharp } = await import("sharp");
    return await sharp(png).png({ palette: true, quality: 90, compressionLevel: 9, effort: 10 }).toBuffer();
  } catch {
    return png;
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { url: { type: "string", default: "http://127.0.0.1:3000" }, out: { type: "string", default: "docs/images" } } });
  const out = path.resolve(values.out);
  mkdirSync(out, { recursive: true });
  const browserPath = (await findChromium(env().PLAYWRIGHT_CHROMIUM_PATH)).path;
  const browser = await chromium.launch({ executablePath: browserPath, args: ["--no-sandbox"] });
  try {
    const page = await browser.newPage({ baseURL: values.url, viewport: { width: 1280, height: 900 }, colorScheme: "light" });
    await page.goto("/login");
    await page.getByLabel("Email").fill("admin@ceilings.local");
    await page.getByLabel("Password").fill("ceilings-demo");
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByTestId("signed-in-as").waitFor();
    for (const shot of SHOTS) {
      await page.goto(shot.path);
      await page.locator("main").first().waitFor();
      // Charts animate in; a still frame once they are drawn.
      await page.waitForLoadState("networkidle");
      await page.waitForTimeout(1500);
      const png =
        "selector" in shot
          ? await page.locator(shot.selector).screenshot()
          : await page.screenshot({ fullPage: true, ...(shot.height ? { clip: { x: 0, y: 0, width: 1280, height: shot.height } } : {}) });
      writeFileSync(path.join(out, shot.file), await compress(png));
      console.log(path.join(out, shot.file));
    }
  } finally {
    await browser.close();
  }
}

main().catch((error: unknown) => {
  console.error(`docs-screenshots: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
