"use client";

import Link from "next/link";
import { type ReactNode, useId, useState } from "react";
import { CartesianGrid, Line, LineChart, ReferenceDot, ResponsiveContainer, Tooltip, XAxis, YAxis } from "recharts";
import type { ReconDay, ReconSeries } from "@/lib/reconciliation/read";
import { driftDirectionSentence, driftPercentText } from "@/lib/reconciliation/words";
import { Money } from "@/components/money";
import { formatCompact, formatDay, formatMoneyCompact, formatUnits, type SpendMode } from "@/lib/format";
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

export type ReconciliationRanges = { 30: ReconSeries; 90: ReconSeries };

type Props = {
  /** Both ranges are prepared by the server: toggling never fetches. */
  ranges: ReconciliationRanges;
  /** Whether a source maps this endpoint: without one (and no compared day) the chart is an empty state. */
  hasSource: boolean;
  initialRange?: 30 | 90;
};

// The provider's line is drawn in the spend colour, Ceilings' in the ceiling colour (one palette
// for every chart), and a day past the threshold gets a red dot on the provider's line.
const colors = { billed: chartColors.spend, charged: chartColors.ceiling, over: chartColors.killEdge };

export type ReconRow = { day: string; billed: number | null; charged: number | null; over: boolean; source: ReconDay };

/** The rows a chart plots in units or money: billed and charged are null on days no source compared (gaps in both lines). */
export function reconRows(days: readonly ReconDay[], mode: SpendMode): ReconRow[] {
  return days.map((d) => ({
    day: d.day,
    billed: mode === "units" ? d.billedUnits : d.billedMicros,
    charged: mode === "units" ? d.chargedUnits : d.chargedMicros,
    over: d.final && (d.drift?.over ?? false),
    source: d,
  }));
}

/** One sentence over the range: how many days were compared and how many passed the threshold. */
export function reconSummary(s: ReconSeries): string {
  const compared = s.days.filter((d) => d.drift !== null);
  const over = compared.filter((d) => d.final && d.drift?.over).length;
  const zone = s.timeZone === "UTC" ? "UTC days" : `days in ${s.timeZone}, the provider's`;
  if (compared.length === 0) return `No day of the last ${s.days.length} has the provider's numbers yet (${zone}).`;
  return `${compared.length} of the last ${s.days.length} days compared (${zone}); ${over === 0 ? "none" : over} past the threshold.`;
}

export function ReconciliationChart({ ranges, hasSource, initialRange = 30 }: Props) {
  const [range, setRange] = useState<30 | 90>(initialRange);
  // Money compares what the bill says; an endpoint priced at zero has only its units to compare.
  const [mode, setMode] = useState<SpendMode>(() => (ranges[90].days.some((d) => (d.billedMicros ?? 0) > 0 || (d.chargedMicros ?? 0) > 0) ? "money" : "units"));
  const captionId = useId();
  const data = ranges[range];
  const anyBilled = ranges[90].days.some((d) => d.billedUnits !== null);

  if (!hasSource && !anyBilled) {
    return (
      <div data-testid="reconciliation-chart" data-state="empty" className="text-sm text-zinc-600 dark:text-zinc-400">
        No source reports this endpoint&apos;s usage yet: connect one on the{" "}
        <Link href="/reconciliation" className="underline underline-offset-2">
          Reconciliation page
        </Link>
        .
      </div>
    );
  }

  const rows = reconRows(data.days, mode);
  const amount = (v: number) => (mode === "units" ? formatUnits(v, data.unit) : <Money micros={v} currency={data.currency} />);
  const tick = (v: number) => (mode === "units" ? formatCompact(v) : formatMoneyCompact(v, data.currency));
  const overRows = rows.filter((r) => r.over && r.billed !== null);

  return (
    <figure
      className={`${chartThemeClass} space-y-3`}
      aria-labelledby={captionId}
      data-testid="reconciliation-chart"
      data-state="drawn"
      data-range={range}
      data-mode={mode}
    >
      <div className="flex flex-wrap items-center justify-between gap-2">
        <figcaption id={captionId} className="text-sm text-zinc-700 dark:text-zinc-300">
          <span className="font-medium text-zinc-900 dark:text-zinc-100">Billed beside charged. </span>
          {reconSummary(data)}
        </figcaption>
        <div className="flex gap-2">
          <div role="group" aria-label="Range" className={toggleGroupClass}>
            {([30, 90] as const).map((r) => (
              <button key={r} type="button" aria-pressed={range === r} className={toggleButtonClass(range === r)} onClick={() => setRange(r)}>
                {r} days
              </button>
            ))}
          </div>
          <div role="group" aria-label="Compare in" className={toggleGroupClass}>
            {(["units", "money"] as const).map((m) => (
              <button key={m} type="button" aria-pressed={mode === m} className={toggleButtonClass(mode === m)} onClick={() => setMode(m)}>
                {m === "units" ? data.unit : data.currency}
              </button>
            ))}
          </div>
        </div>
      </div>

      <ul className="flex flex-wrap gap-x-4 gap-y-1 text-xs text-zinc-700 dark:text-zinc-300" aria-label="Legend">
        <li>
          <span className={lineSwatchClass} style={{ borderColor: colors.billed }} /> billed by the provider
        </li>
        <li>
          <span className={lineSwatchClass} style={{ borderColor: colors.charged }} /> charged by Ceilings
        </li>
        {overRows.length > 0 ? (
          <li>
            <span className={`${swatchClass} rounded-full`} style={{ background: colors.over }} /> past the threshold
          </li>
        ) : null}
      </ul>

      {/* The table below carries the same numbers for screen readers, so the drawing is hidden from them. */}
      <div className="h-64 w-full sm:h-72" aria-hidden="true">
        <ResponsiveContainer width="100%" height="100%" minWidth={0}>
          <LineChart data={rows} margin={chartMargin} accessibilityLayer={false}>
            <CartesianGrid vertical={false} stroke={chartColors.grid} />
            <XAxis dataKey="day" tickFormatter={formatDay} tick={axisTick} tickLine={false} minTickGap={16} interval="preserveStartEnd" />
            <YAxis tickFormatter={tick} tick={axisTick} tickLine={false} axisLine={false} width={56} allowDecimals={false} />
            {/* Gaps stay gaps in both lines: a day nothing compared is not a day of zero. */}
            <Line
              dataKey="charged"
              name="charged by Ceilings"
              stroke={colors.charged}
              strokeWidth={2}
              dot={false}
              activeDot={false}
              connectNulls={false}
              isAnimationActive={false}
              className="charged-line"
            />
            <Line
              dataKey="billed"
              name="billed by the provider"
              stroke={colors.billed}
              strokeWidth={2}
              dot={false}
              activeDot={false}
              connectNulls={false}
              isAnimationActive={false}
              className="billed-line"
            />
            {overRows.map((r) => (
              <ReferenceDot key={r.day} x={r.day} y={r.billed ?? 0} r={5} fill={colors.over} stroke="none" ifOverflow="extendDomain" className="drift-over" />
            ))}
            <Tooltip
              isAnimationActive={false}
              content={({ active, label }) => (active ? <DayTooltip row={rows.find((r) => r.day === label)} amount={amount} /> : null)}
            />
          </LineChart>
        </ResponsiveContainer>
      </div>

      <ReconTable rows={rows} mode={mode} unit={data.unit} currency={data.currency} caption={reconSummary(data)} />
    </figure>
  );
}

function DayTooltip({ row, amount }: { row: ReconRow | undefined; amount: (v: number) => ReactNode }) {
  if (!row) return null;
  const drift = row.source.drift;
  return (
    <div className={tooltipClass}>
      <p className="font-medium">{formatDay(row.day)}</p>
      <p>Billed: {row.billed === null ? "not reported yet" : amount(row.billed)}</p>
      <p>Charged: {row.charged === null ? "not compared yet" : amount(row.charged)}</p>
      {drift ? (
        <p className={row.over ? "font-medium text-red-700 dark:text-red-300" : ""}>
          {driftPercentText(drift)}: {driftDirectionSentence(drift)}
          {row.source.final ? "" : " (not final)"}
        </p>
      ) : null}
      {row.source.held > 0 ? <p>{row.source.held} reservation(s) still held: not final</p> : null}
    </div>
  );
}

function ReconTable({ rows, mode, unit, currency, caption }: { rows: ReconRow[]; mode: SpendMode; unit: string; currency: string; caption: string }) {
  const amount = (v: number) => (mode === "units" ? formatUnits(v, unit) : <Money micros={v} currency={currency} />);
  return (
    <div className="sr-only">
      <table>
        <caption>{caption}</caption>
        <thead>
          <tr>
            <th scope="col">Day</th>
            <th scope="col">Billed by the provider ({mode === "units" ? unit : currency})</th>
            <th scope="col">Charged by Ceilings</th>
            <th scope="col">Drift</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((r) => (
            <tr key={r.day}>
              <th scope="row">{formatDay(r.day)}</th>
              <td>{r.billed === null ? "not reported" : amount(r.billed)}</td>
              <td>{r.charged === null ? "not compared" : amount(r.charged)}</td>
              <td>
                {r.source.drift
                  ? `${driftPercentText(r.source.drift)}${!r.source.final ? ", not final" : r.source.drift.over ? ", past the threshold" : ""}`
                  : "not compared"}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
