import { expect, type Page } from "@playwright/test";

/**
 * Waits until every chart on the page has drawn: recharts measures its box after hydration
 * (ResizeObserver) and only then renders its svg, so a page measured before that has not got its
 * final width yet.
 */
export async function chartsDrawn(page: Page): Promise<void> {
  await page.waitForLoadState("networkidle");
  await page.waitForFunction(() =>
    [...document.querySelectorAll(".recharts-responsive-container")].every((box) => box.querySelector("svg.recharts-surface") !== null),
  );
  // One more frame, so layout after the svg's first paint is settled.
  await page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))));
}

export type Overflow = { viewport: number; scrollWidth: number; culprits: string[] };

/**
 * How far the document scrolls sideways: its scroll width against the viewport, the one number
 * that says whether a phone user can drag the page into blank space. The culprits only name
 * elements for the failure message; the verdict is the scroll width alone, so a page that is too
 * wide fails even when no culprit can be named.
 *
 * A culprit sticks out past the viewport and is clipped by no box on its containing-block chain.
 * That chain is not the DOM's: an absolutely positioned element (an sr-only label in a table cell)
 * is clipped only by a box that is positioned, so the sideways-scrolling box of a table that is
 * not positioned does not hold it and it widens the whole page.
 */
export async function measureOverflow(page: Page): Promise<Overflow> {
  return page.evaluate(() => {
    const viewport = document.documentElement.clientWidth;
    const scrollWidth = Math.max(document.documentElement.scrollWidth, document.body.scrollWidth);
    const culprits: string[] = [];
    if (scrollWidth <= viewport) return { viewport, scrollWidth, culprits };
    const positioned = (el: Element) => getComputedStyle(el).position !== "static";
    const outOfFlow = (el: Element) => ["absolute", "fixed"].includes(getComputedStyle(el).position);
    const clipped = (el: Element): boolean => {
      let absolute = outOfFlow(el);
      for (let box = el.parentElement; box && box !== document.body; box = box.parentElement) {
        if (absolute && !positioned(box)) continue; // not its containing block: no clipping
        if (getComputedStyle(box).overflowX !== "visible") return true;
        absolute = outOfFlow(box);
      }
      return false;
    };
    for (const el of document.querySelectorAll("body *")) {
      const r = el.getBoundingClientRect();
      if (r.right <= viewport + 1 || clipped(el)) continue;
      const tag = `<${el.tagName.toLowerCase()} class="${el.getAttribute("class") ?? ""}">`;
      culprits.push(`${tag} ${Math.round(r.width)}px wide, right edge at ${Math.round(r.right)}px, in ${el.parentElement?.tagName.toLowerCase() ?? "?"}`);
      if (culprits.length === 5) break;
    }
    return { viewport, scrollWidth, culprits };
  });
}

/** Fails unless the page is no wider than the viewport, naming what sticks out. */
export async function expectNoSidewaysScroll(page: Page, label: string): Promise<void> {
  const o = await measureOverflow(page);
  expect(
    o.scrollWidth,
    `${label} is ${o.scrollWidth}px wide in a ${o.viewport}px viewport: ${o.culprits.join("; ") || "no element named"}`,
  ).toBeLessThanOrEqual(o.viewport);
}
