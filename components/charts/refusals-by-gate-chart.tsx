"use client";

import { useId } from "react";
import { Bar, BarChart, CartesianGrid, ResponsiveContainer, Tooltip, XAxis, YAxis } from "recharts";
import type { Gate } from "@/lib/vocabulary";
import { axisTick, chartColors, chartMargin, chartThemeClass, swatchClass, tooltipClass } from "./chart-theme";
import { formatCount } from "@/lib/format";
import { DAY_MS } from "@/lib/time";

// Gate colours live here rather than in chart-theme: no other chart draws gates. Mid-tone hues
// that read on white and on zinc-900 alike, ordered from "we chose this" to "something broke".
export const GATE_COLORS = {
  ceiling: "#d97706",
  budget: "#65a30d",
  cooldown: "#0891b2",
  throttle: "#7c3aed",
  per_call_max: "#db2777",
  kill_switch: "#dc2626",
  unavailable: "#71717a",
  blocked: "#1e3a8a",
} as const satisfies Record<Gate, string>;
// Drawn in colour order, not enforcement order.
const DRAWN_GATES = Object.keys(GATE_COLORS).filter((g): g is Gate => g in GATE_COLORS);

export type GateChartBucket = { start: string } & Record<Gate, number>;

type Props = {
  buckets: GateChartBucket[];
  bucketMs: number;
  /** The range in words, e.g. "last 7 days, per hour", for the caption. */
  caption: string;
  totals: Record<Gate, number>;
};

function formatTick(iso: string, bucketMs: number): string {
  const s = iso.replace("T", " ");
  return bucketMs >= DAY_MS ? s.slice(5, 10) : s.slice(5, 16);
}

/** Refusals per gate per time bucket, stacked. Data comes prepared from the server; it never fetches. */
export function RefusalsByGateChart({ buckets, bucketMs, caption, totals }: Props) {
  const captionId = useId();
  const total = DRAWN_GATES.reduce((sum, g) => sum + totals[g], 0);
  return (
    <figure className={`${chartThemeClass} space-y-3`} aria-labelledby={captionId} data-testid="refusals-by-gate-chart">
      <figcaption id={captionId} className="text-sm text-zinc-700 dark:text-zinc-300">
        <span className="font-medium text-zinc-900 dark:text-zinc-100">Refusals per gate, </span>
        {caption}: {formatCount(total)} in all.
      </figcaption>
      <ul className="flex flex-wrap gap-x-4 gap-y-1 text-xs text-zinc-700 dark:text-zinc-300" aria-label="Refusals per gate in this range">
        {DRAWN_GATES.map((g) => (
          <li key={g} data-gate={g}>
            <span className={swatchClass} style={{ backgroundColor: GATE_COLORS[g] }} /> {g} {formatCount(totals[g])}
          </li>
        ))}
      </ul>
      {/* The legend above carries the totals as text; the drawing is hidden from screen readers. */}
      <div className="h-56 w-full" aria-hidden="true">
        <ResponsiveContainer width="100%" height="100%" minWidth={0}>
          <BarChart data={buckets} margin={chartMargin} accessibilityLayer={false}>
            <CartesianGrid vertical={false} stroke={chartColors.grid} />
            <XAxis dataKey="start" tickFormatter={(v: string) => formatTick(v, bucketMs)} tick={axisTick} tickLine={false} minTickGap={24} />
            <YAxis tick={axisTick} tickLine={false} axisLine={false} width={48} allowDecimals={false} />
            <Tooltip
              isAnimationActive={false}
              content={({ active, payload, label }) =>
                active && payload && payload.length > 0 ? (
                  <div className={tooltipClass}>
                    <p className="font-medium">{typeof label === "string" ? `${label.replace("T", " ").slice(0, 16)} UTC` : ""}</p>
                    {payload.map((p) => (
                      <p key={String(p.dataKey)}>
                        {String(p.dataKey)}: {formatCount(Number(p.value))}
                      </p>
                    ))}
                  </div>
                ) : null
              }
            />
            {DRAWN_GATES.map((g) => (
              <Bar key={g} dataKey={g} stackId="gates" fill={GATE_COLORS[g]} isAnimationActive={false} maxBarSize={28} />
            ))}
          </BarChart>
        </ResponsiveContainer>
      </div>
    </figure>
  );
}
