import type { Locator } from "@playwright/test";

/**
 * The named columns of a table row that a person cannot see without scrolling sideways: each cell
 * (found by its column header's text) must have a size, lie inside the viewport's width and not be
 * cut off by a box that scrolls or clips it (a table's sideways-scrolling box). The row is brought
 * into view vertically first; nothing scrolls sideways. An empty list: every column reads.
 */
export async function columnsOutOfSight(row: Locator, columns: string[] | "all"): Promise<string[]> {
  return row.evaluate((tr, wanted) => {
    const table = tr.closest("table");
    if (!(tr instanceof HTMLTableRowElement) || !table) return ["not a table row"];
    const headers = [...table.querySelectorAll("thead th")].map((th) => (th.textContent ?? "").trim().toLowerCase());
    // "all": every column with a name whose cell in this row says something.
    const names = wanted === "all" ? headers.filter((h, i) => h !== "" && (tr.cells[i]?.textContent ?? "").trim() !== "") : wanted;
    window.scrollTo(window.scrollX, window.scrollY + tr.getBoundingClientRect().top - 120);
    const width = document.documentElement.clientWidth;
    const problems: string[] = [];
    for (const name of names) {
      const index = headers.indexOf(name.toLowerCase());
      const cell = index < 0 ? undefined : tr.cells[index];
      if (!cell) {
        problems.push(`${name}: no such column (${headers.join(", ")})`);
        continue;
      }
      const r = cell.getBoundingClientRect();
      if (r.width === 0 || r.height === 0 || getComputedStyle(cell).visibility === "hidden") {
        problems.push(`${name}: not shown`);
        continue;
      }
      if (r.left < -1 || r.right > width + 1) {
        problems.push(`${name}: at ${Math.round(r.left)}-${Math.round(r.right)}px in a ${width}px viewport`);
        continue;
      }
      for (let box = cell.parentElement; box && box !== document.body; box = box.parentElement) {
        if (getComputedStyle(box).overflowX === "visible") continue;
        const b = box.getBoundingClientRect();
        if (r.left < b.left - 1 || r.right > b.right + 1) {
          problems.push(`${name}: at ${Math.round(r.left)}-${Math.round(r.right)}px, cut off by its box at ${Math.round(b.left)}-${Math.round(b.right)}px`);
          break;
        }
      }
    }
    return problems;
  }, columns);
}
