// One place for chart styling. Colours are CSS variables set by `chartThemeClass` on the chart's
// wrapper, so the same SVG reads well in light and dark (Tailwind's dark: follows the OS setting).
// Hex values are Tailwind's palette, written out so no theme variable has to be emitted for them.

export const chartThemeClass = [
  "[--chart-spend:#0369a1] dark:[--chart-spend:#38bdf8]", // sky 700 / 400
  "[--chart-ceiling:#b45309] dark:[--chart-ceiling:#fbbf24]", // amber 700 / 400
  "[--chart-kill:#fecaca] dark:[--chart-kill:#7f1d1d]", // red 200 / 900
  "[--chart-kill-edge:#dc2626] dark:[--chart-kill-edge:#f87171]", // red 600 / 400
  "[--chart-pace:#52525b] dark:[--chart-pace:#a1a1aa]", // zinc 600 / 400
  "[--chart-allowance:#15803d] dark:[--chart-allowance:#4ade80]", // green 700 / 400
  "[--chart-grid:#e4e4e7] dark:[--chart-grid:#27272a]", // zinc 200 / 800
  "[--chart-axis:#52525b] dark:[--chart-axis:#a1a1aa]",
].join(" ");

export const chartColors = {
  spend: "var(--chart-spend)",
  ceiling: "var(--chart-ceiling)",
  kill: "var(--chart-kill)",
  killEdge: "var(--chart-kill-edge)",
  pace: "var(--chart-pace)",
  projection: "var(--chart-spend)",
  allowance: "var(--chart-allowance)",
  grid: "var(--chart-grid)",
  axis: "var(--chart-axis)",
} as const;

export const axisTick = { fill: chartColors.axis, fontSize: 12 } as const;

export const chartMargin = { top: 8, right: 12, bottom: 0, left: 0 } as const;

/** Tooltip box: the same card look as the rest of the dashboard. */
export const tooltipClass =
  "rounded-md border border-zinc-200 bg-white px-3 py-2 text-xs shadow-md dark:border-zinc-700 dark:bg-zinc-900 text-zinc-900 dark:text-zinc-100";

/** A legend swatch drawn in HTML, so the legend is text a screen reader and a test can read. */
export const swatchClass = "inline-block h-2.5 w-4 rounded-sm align-middle";

/** A legend sample of a line: colour and dash style come from the style attribute. */
export const lineSwatchClass = "inline-block w-5 align-middle border-t-2";

export const toggleGroupClass = "inline-flex overflow-hidden rounded-md border border-zinc-300 dark:border-zinc-700";

export function toggleButtonClass(pressed: boolean): string {
  return pressed
    ? "px-3 py-1 text-xs font-medium bg-zinc-900 text-white dark:bg-zinc-100 dark:text-zinc-900"
    : "px-3 py-1 text-xs font-medium bg-white text-zinc-700 hover:bg-zinc-100 dark:bg-zinc-900 dark:text-zinc-300 dark:hover:bg-zinc-800";
}
