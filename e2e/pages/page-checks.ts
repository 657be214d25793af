import { readdirSync } from "node:fs";
import path from "node:path";
import AxeBuilder from "@axe-core/playwright";
import type { Page, TestInfo } from "@playwright/test";
import { chartsDrawn, expectNoSidewaysScroll } from "./overflow";
import { columnsOutOfSight } from "./table-cells";

// What every page must pass on a phone (390 px), on a new deployment and a filled one
// (phone-width.spec.ts, empty-deployment.spec.ts): no sideways scroll, every column of a table's
// first row in sight, and no accessibility violation axe-core can find (WCAG 2.2 A and AA rules and
// its best practices).

/** The rules every page is held to; bench:dashboard --axe runs the same ones at production size. */
export const AXE_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa", "best-practice"];

/** Every page of the app as its route: app/(dashboard)/endpoints/[key]/page.tsx is /endpoints/[key]. */
export function pageRoutes(dir = "app", route = ""): string[] {
  const routes: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.isFile() && entry.name === "page.tsx") routes.push(route || "/");
    if (!entry.isDirectory() || entry.name.startsWith("_") || entry.name === "api") continue;
    // A route group, "(dashboard)", adds nothing to the path.
    routes.push(...pageRoutes(path.join(dir, entry.name), entry.name.startsWith("(") ? route : `${route}/${entry.name}`));
  }
  return routes;
}

/** Checks the page as it is now; each problem is added to `failures` with `label`, and a screenshot is attached. */
export async function checkPage(page: Page, label: string, failures: string[], testInfo: TestInfo): Promise<void> {
  await chartsDrawn(page);
  try {
    await expectNoSidewaysScroll(page, label);
  } catch (error) {
    failures.push(error instanceof Error ? (error.message.split("\n")[0] ?? label) : label);
  }
  // Every table's first row reads whole: no column of it is out of sight.
  const tables = page.locator("[role=region] > table");
  for (let i = 0; i < (await tables.count()); i++) {
    const row = tables.nth(i).locator("tbody tr").first();
    for (const problem of await columnsOutOfSight(row, "all")) failures.push(`${label}, table ${i + 1}: ${problem}`);
  }
  const axe = await new AxeBuilder({ page }).withTags(AXE_TAGS).analyze();
  for (const v of axe.violations) {
    const where = v.nodes
      .slice(0, 3)
      .map((n) => n.target.join(" "))
      .join("; ");
    failures.push(`${label}: axe ${v.id} (${v.impact ?? "?"}): ${v.help} at ${where}`);
  }
  await testInfo.attach(`phone ${label}`, { body: await page.screenshot({ fullPage: true }), contentType: "image/png" });
}
