import { chromium } from "playwright-core";
import AxeBuilder from "@axe-core/playwright";
const BASE = "http://127.0.0.1:3301";
async function main() {
  const browser = await chromium.launch({ executablePath: process.env.CHROME!, args: ["--no-sandbox", "--disable-gpu"] });
  const context = await browser.newContext(); const page = await context.newPage();
  await page.goto(BASE + "/login");
  await page.getByLabel("Email").fill("admin@ceilings.local");
  await page.getByLabel("Password").fill("ceilings-demo");
  await page.getByRole("button", { name: /sign in/i }).click();
  await page.waitForURL(BASE + "/");
  const paths = process.argv.slice(2);
  const seen = new Map<string, { impact: string; help: string; pages: Set<string>; targets: string[] }>();
  for (const p of paths) {
    await page.goto(BASE + p);
    await page.waitForTimeout(500);
    const r = await new AxeBuilder({ page }).analyze();
    for (const v of r.violations) {
      const s = seen.get(v.id) ?? { impact: v.impact ?? "", help: v.help, pages: new Set(), targets: [] };
      s.pages.add(p);
      for (const n of v.nodes.slice(0, 3)) if (s.targets.length < 6) s.targets.push(`${p}: ${n.target.join(" ")} :: ${n.failureSummary?.split("\n").slice(1, 2).join(" ")}`);
      seen.set(v.id, s);
    }
  }
  for (const [id, s] of seen) console.log(`\n## ${id} (${s.impact}) ${s.help} — ${s.pages.size} pages: ${[...s.pages].join(" ")}\n  ${s.targets.join("\n  ")}`);
  console.log(`\n${seen.size} rules violated`);
  await browser.close();
}
main();
