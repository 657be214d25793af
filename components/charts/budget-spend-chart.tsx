"use client";

import { useId, useState } from "react";
import { Bar, CartesianGrid, ComposedChart, Line, ResponsiveContainer, Tooltip, XAxis, YAxis } from "recharts";
import { Money } from "@/components/money";
import { formatDay, formatMoneyCompact, formatMoneyParts } from "@/lib/format";
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

/** One window of a budget (a UTC day or a billing month), its money in micros. */
export type BudgetSpendPoint = { day: string; spend: number; busiest: number; accounts: number; /** The value in force at the window's end. */ value: number };
export type BudgetSpendRanges = { 30: BudgetSpendPoint[]; 90: BudgetSpendPoint[] };

type Props = {
  ranges: BudgetSpendRanges;
  /** Today's value, so the axis always reaches it. */
  value: number;
  currency: string;
  perAccount: boolean;
  /** "UTC day" or "billing month": what one bar is. */
  windowLabel: string;
};

/**
 * A budget's spend per window over 30 or 90 days against its value. For a per-account budget the
 * bars are every account together and the value is each account's, so it is drawn against the
 * busiest account's line instead. Animation is off: the dashboard refreshes itself and tests read it.
 */
export function BudgetSpendChart({ ranges, value, currency, perAccount, windowLabel }: Props) {
  const [range, setRange] = useState<30 | 90>(30);
  const captionId = useId();
  const rows = ranges[range];
  const total = rows.reduce((sum, r) => sum + r.spend, 0);
  const over = rows.filter((r) => (perAccount ? r.busiest : r.spend) > r.value).length;
  const summary =
    total === 0
      ? `No spend in the last ${range} days.`
      : `${formatMoneyParts(total, currency).text} in the last ${range} days${perAccount ? ", every account together" : ""}.` +
        ` ${over} ${windowLabel}${over === 1 ? "" : "s"} above the value then in force.`;
  return (
    <figure className={`${chartThemeClass} min-w-0 space-y-3`} aria-labelledby={captionId} data-testid="budget-spend-chart" data-range={range}>
      <div className="flex flex-wrap items-center justify-between gap-2">
        <figcaption id={captionId} className="text-sm text-zinc-700 dark:text-zinc-300">
          <span className="font-medium text-zinc-900 dark:text-zinc-100">Spend per {windowLabel}. </span>
          {summary}
        </figcaption>
        <div role="group" aria-label="Range" className={toggleGroupClass}>
          {([30, 90] as const).map((r) => (
            <button key={r} type="button" aria-pressed={range === r} className={toggleButtonClass(range === r)} onClick={() => setRange(r)}>
              {r} days
            </button>
          ))}
        </div>
      </div>
      <ul className="flex flex-wrap gap-x-4 gap-y-1 text-xs text-zinc-700 dark:text-zinc-300" aria-label="Legend">
        <li>
          <span className={swatchClass} style={{ background: chartColors.spend }} /> spend per {windowLabel}
          {perAccount ? ", every account together" : ""}
        </li>
        {perAccount ? (
          <li>
            <span className={lineSwatchClass} style={{ borderColor: chartColors.pace }} /> the account that spent most
          </li>
        ) : null}
        <li>
          <span className={lineSwatchClass} style={{ borderColor: chartColors.ceiling }} /> value in force at the end of each {windowLabel}
          {perAccount ? ", for each account" : ""}
        </li>
      </ul>
      <div className="h-56 w-full sm:h-72" aria-hidden="true">
        <ResponsiveContainer width="100%" height="100%" minWidth={0}>
          <ComposedChart data={rows} margin={chartMargin} accessibilityLayer={false}>
            <CartesianGrid vertical={false} stroke={chartColors.grid} />
            <XAxis dataKey="day" tickFormatter={formatDay} tick={axisTick} tickLine={false} minTickGap={16} interval="preserveStartEnd" />
            <YAxis
              tickFormatter={(v: number) => formatMoneyCompact(v, currency)}
              tick={axisTick}
              tickLine={false}
              axisLine={false}
              width={64}
              domain={[0, (max: number) => Math.max(max, value, 1)]}
            />
            <Bar dataKey="spend" fill={chartColors.spend} isAnimationActive={false} maxBarSize={24} className="spend-bars" />
            {perAccount ? <Line dataKey="busiest" type="monotone" stroke={chartColors.pace} strokeWidth={2} dot={false} isAnimationActive={false} /> : null}
            <Line
              dataKey="value"
              type="stepAfter"
              stroke={chartColors.ceiling}
              strokeWidth={2}
              dot={false}
              activeDot={false}
              isAnimationActive={false}
              className="value-line"
            />
            <Tooltip
              cursor={{ fill: chartColors.grid, fillOpacity: 0.4 }}
              isAnimationActive={false}
              content={({ active, label }) => {
                const r = active ? rows.find((x) => x.day === label) : undefined;
                return r ? (
                  <div className={tooltipClass}>
                    <p className="font-medium">{formatDay(r.day)} (UTC)</p>
                    <p>
                      Spend: <Money micros={r.spend} currency={currency} />
                    </p>
                    <p>
                      Value: <Money micros={r.value} currency={currency} />
                      {perAccount ? " for each account" : ""}
                    </p>
                    {perAccount ? (
                      <p>
                        Busiest account: <Money micros={r.busiest} currency={currency} /> of {r.accounts} account(s)
                      </p>
                    ) : null}
                  </div>
                ) : null;
              }}
            />
          </ComposedChart>
        </ResponsiveContainer>
      </div>
      <div className="sr-only">
        <table>
          <caption>{summary}</caption>
          <thead>
            <tr>
              <th scope="col">{windowLabel} from</th>
              <th scope="col">Spend</th>
              <th scope="col">Value</th>
              {perAccount ? <th scope="col">Busiest account</th> : null}
            </tr>
          </thead>
          <tbody>
            {rows.map((r) => (
              <tr key={r.day}>
                <th scope="row">{formatDay(r.day)}</th>
                <td>
                  <Money micros={r.spend} currency={currency} />
                </td>
                <td>
                  <Money micros={r.value} currency={currency} />
                </td>
                {perAccount ? (
                  <td>
                    <Money micros={r.busiest} currency={currency} />
                  </td>
                ) : null}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </figure>
  );
}
