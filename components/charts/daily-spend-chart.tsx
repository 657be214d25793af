"use client";

import { type ReactNode, useId, useState } from "react";
import { Bar, CartesianGrid, ComposedChart, Line, ReferenceArea, ResponsiveContainer, Tooltip, XAxis, YAxis } from "recharts";
import type { DailySpend } from "@/lib/spend/daily";
import { formatCompact, formatDay, formatMoneyCompact, formatUnits, type SpendMode } from "@/lib/format";
import { ceilingMoved, dailyRows, dailySummary, killBands, type DailyRow } from "./chart-data";
import { ChartMoney } from "./chart-money";
import {
  axisTick,
  chartColors,
  chartMargin,
  chartThemeClass,
  lineSwatchClass,
  swatchClass,
  toggleButtonClass,
  toggleGroupClass,
  tooltipClass,
} from "./chart-theme";

export type DailySpendRanges = { 30: DailySpend; 90: DailySpend };

type Props = {
  /** Both ranges are prepared by the server: toggling never fetches. */
  ranges: DailySpendRanges;
  initialRange?: 30 | 90;
};

/**
 * Spend per UTC day as bars, the daily ceiling as a step line that moves where it was changed,
 * and kill periods shaded. Animation is off: the dashboard refreshes itself and tests read it.
 */
export function DailySpendChart({ ranges, initialRange = 30 }: Props) {
  const [range, setRange] = useState<30 | 90>(initialRange);
  const [mode, setMode] = useState<SpendMode>("units");
  const captionId = useId();
  const data = ranges[range];
  const rows = dailyRows(data.days, data.kills, mode, data.pricePico);
  const bands = killBands(
    data.days.map((d) => d.day),
    data.kills,
  );
  const hasCeiling = data.days.some((d) => d.ceiling !== null);
  const amount = (v: number) => (mode === "units" ? formatUnits(v, data.unit) : <ChartMoney micros={v} currency={data.currency} atMost={data.moneyAtMost} />);
  const tick = (v: number) => (mode === "units" ? formatCompact(v) : formatMoneyCompact(v, data.currency));

  return (
    <figure className={`${chartThemeClass} space-y-3`} aria-labelledby={captionId} data-testid="daily-spend-chart" data-range={range} data-mode={mode}>
      <div className="flex flex-wrap items-center justify-between gap-2">
        <figcaption id={captionId} className="text-sm text-zinc-700 dark:text-zinc-300">
          <span className="font-medium text-zinc-900 dark:text-zinc-100">Daily spend. </span>
          {dailySummary(data)}
        </figcaption>
        <div className="flex gap-2">
          <div role="group" aria-label="Range" className={toggleGroupClass}>
            {([30, 90] as const).map((r) => (
              <button key={r} type="button" aria-pressed={range === r} className={toggleButtonClass(range === r)} onClick={() => setRange(r)}>
                {r} days
              </button>
            ))}
          </div>
          <div role="group" aria-label="Show spend in" className={toggleGroupClass}>
            {(["units", "money"] as const).map((m) => (
              <button key={m} type="button" aria-pressed={mode === m} className={toggleButtonClass(mode === m)} onClick={() => setMode(m)}>
                {m === "units" ? data.unit : data.currency}
              </button>
            ))}
          </div>
        </div>
      </div>

      <ChartLegend hasCeiling={hasCeiling} hasKills={bands.length > 0} unit={data.unit} />

      {/* The table below carries the same numbers for screen readers, so the drawing is hidden from them. */}
      <div className="h-64 w-full sm:h-72" aria-hidden="true">
        <ResponsiveContainer width="100%" height="100%" minWidth={0}>
          <ComposedChart data={rows} margin={chartMargin} accessibilityLayer={false}>
            <CartesianGrid vertical={false} stroke={chartColors.grid} />
            <XAxis dataKey="day" tickFormatter={formatDay} tick={axisTick} tickLine={false} minTickGap={16} interval="preserveStartEnd" />
            <YAxis tickFormatter={tick} tick={axisTick} tickLine={false} axisLine={false} width={56} allowDecimals={false} />
            {bands.map((b) => (
              <ReferenceArea
                key={`${b.x1}-${b.x2}-${b.label}`}
                x1={b.x1}
                x2={b.x2}
                fill={chartColors.kill}
                fillOpacity={0.6}
                stroke={chartColors.killEdge}
                strokeOpacity={0.5}
                ifOverflow="extendDomain"
                className="kill-period"
              />
            ))}
            <Bar dataKey="spend" name="spend" fill={chartColors.spend} isAnimationActive={false} maxBarSize={24} className="spend-bars" />
            {hasCeiling ? (
              <Line
                dataKey="ceiling"
                name="ceiling"
                type="step"
                stroke={chartColors.ceiling}
                strokeWidth={2}
                dot={false}
                activeDot={false}
                connectNulls={false}
                isAnimationActive={false}
                className="ceiling-line"
              />
            ) : null}
            <Tooltip
              cursor={{ fill: chartColors.grid, fillOpacity: 0.4 }}
              isAnimationActive={false}
              content={({ active, label }) => (active ? <DayTooltip row={rows.find((r) => r.day === label)} amount={amount} unit={data.unit} /> : null)}
            />
          </ComposedChart>
        </ResponsiveContainer>
      </div>
      {!hasCeiling ? (
        <p className="text-xs text-zinc-600 dark:text-zinc-400">
          {data.source === "per_caller"
            ? "Spend is the sum of the per-account counters; there is no global daily ceiling to draw."
            : "This endpoint has no daily units ceiling, so there is no daily spend to draw."}
        </p>
      ) : null}

      {data.moneyAtMost && mode === "money" ? (
        <p className="text-xs text-zinc-600 dark:text-zinc-400" data-testid="money-at-most">
          This endpoint has several priced parts and its counters hold units of any part: money is shown at most, every unit at the dearest part&apos;s price.
        </p>
      ) : null}

      <DailyTable
        rows={rows}
        mode={mode}
        unit={data.unit}
        currency={data.currency}
        atMost={data.moneyAtMost}
        caption={dailySummary(data)}
        bands={bands.map((b) => b.label)}
      />
    </figure>
  );
}

function ChartLegend({ hasCeiling, hasKills, unit }: { hasCeiling: boolean; hasKills: boolean; unit: string }) {
  return (
    <ul className="flex flex-wrap gap-x-4 gap-y-1 text-xs text-zinc-700 dark:text-zinc-300" aria-label="Legend">
      <li>
        <span className={swatchClass} style={{ background: chartColors.spend }} /> spend per UTC day ({unit})
      </li>
      {hasCeiling ? (
        <li>
          <span className={lineSwatchClass} style={{ borderColor: chartColors.ceiling }} /> daily ceiling in force at the end of each day
        </li>
      ) : null}
      {hasKills ? (
        <li>
          <span className={swatchClass} style={{ background: chartColors.kill, outline: `1px solid ${chartColors.killEdge}` }} /> killed
        </li>
      ) : null}
    </ul>
  );
}

function DayTooltip({ row, amount, unit }: { row: DailyRow | undefined; amount: (v: number) => ReactNode; unit: string }) {
  if (!row) return null;
  const d = row.source;
  return (
    <div className={tooltipClass}>
      <p className="font-medium">{formatDay(row.day)} (UTC)</p>
      <p>Spend: {amount(row.spend)}</p>
      {d.ceiling !== null ? (
        <p>
          Ceiling: {formatUnits(d.ceiling, unit)}
          {ceilingMoved(d) && d.ceilingAtStart !== null ? ` (was ${formatUnits(d.ceilingAtStart, unit)} at 00:00)` : ""}
        </p>
      ) : null}
      {row.killed ? <p className="font-medium text-red-700 dark:text-red-300">Killed during this day</p> : null}
    </div>
  );
}

type TableProps = { rows: DailyRow[]; mode: SpendMode; unit: string; currency: string; atMost: boolean; caption: string; bands: string[] };

function DailyTable({ rows, mode, unit, currency, atMost, caption, bands }: TableProps) {
  return (
    <div className="sr-only">
      <table>
        <caption>
          {caption} {bands.join("; ")}
        </caption>
        <thead>
          <tr>
            <th scope="col">Day (UTC)</th>
            <th scope="col">Spend ({mode === "units" ? unit : currency})</th>
            <th scope="col">Money</th>
            <th scope="col">Daily ceiling at the end of the day</th>
            <th scope="col">Killed</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((r) => (
            <tr key={r.day}>
              <th scope="row">{formatDay(r.day)}</th>
              <td>{formatUnits(r.source.units, unit)}</td>
              <td>
                <ChartMoney micros={r.source.moneyMicros} currency={currency} atMost={atMost} />
              </td>
              <td>
                {r.source.ceiling === null ? "none" : formatUnits(r.source.ceiling, unit)}
                {ceilingMoved(r.source) && r.source.ceilingAtStart !== null ? ` (from ${formatUnits(r.source.ceilingAtStart, unit)})` : ""}
              </td>
              <td>{r.killed ? "yes" : "no"}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
