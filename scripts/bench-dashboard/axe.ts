import AxeBuilder from "@axe-core/playwright";
import { chromium } from "@playwright/test";
import { env } from "@/lib/env";
import { AXE_TAGS } from "../../e2e/pages/page-checks";
import { chartsDrawn } from "../../e2e/pages/overflow";
import { findChromium } from "../find-chromium";
import type { Session } from "./render";

// axe-core on every page at production size (bench:dashboard --axe): the e2e suites check pages
// of a few rows, where a table of thousands, a long list of accounts or a killed endpoint's banner
// never shows. The same rules as e2e/pages/page-checks.ts, in a desktop window.

/** Each page's violations as summary lines: "axe: <path>: ok", or one line a violation. */
export async function axePages(baseUrl: string, paths: string[], session: Session): Promise<string[]> {
  const chromiumPath = (await findChromium(env().PLAYWRIGHT_CHROMIUM_PATH)).path;
  // The e2e suite's flags (playwright.config.ts): no sandbox as root, nothing fetched in the background.
  const browser = await chromium.launch({
    executablePath: chromiumPath,
    args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"],
  });
  const lines: string[] = [];
  try {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    await context.addCookies([{ name: session.name, value: session.value, url: baseUrl }]);
    const page = await context.newPage();
    for (const path of paths) {
      await page.goto(new URL(path, baseUrl).toString());
      if (new URL(page.url()).pathname === "/login") throw new Error(`axe: ${path} sent the browser to /login: is the server on this NEXTAUTH_SECRET?`);
      await chartsDrawn(page);
      const { violations } = await new AxeBuilder({ page }).withTags(AXE_TAGS).analyze();
      const found = violations.map((v) => {
        const where = v.nodes
          .slice(0, 3)
          .map((n) => n.target.join(" "))
          .join("; ");
        return `axe: ${path}: ${v.id} (${v.impact ?? "?"}, ${v.nodes.length} element${v.nodes.length === 1 ? "" : "s"}): ${v.help} at ${where}`;
      });
      console.log(found.length ? found.join("\n") : `axe: ${path}: no violations`);
      lines.push(...(found.length ? found : [`axe: ${path}: no violations`]));
    }
  } finally {
    await browser.close();
  }
  return lines;
}
