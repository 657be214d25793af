"use client";

import { useId } from "react";
import { CartesianGrid, ComposedChart, Line, ReferenceLine, ResponsiveContainer, Tooltip, XAxis, YAxis } from "recharts";
import type { MonthDay, MonthToDateSpend } from "@/lib/spend/month";
import { formatCompact, formatDay, formatUnits } from "@/lib/format";
import { monthSummary } from "./chart-data";
import { ChartMoney } from "./chart-money";
import { axisTick, chartColors, chartMargin, chartThemeClass, lineSwatchClass, tooltipClass } from "./chart-theme";

type Props = { data: MonthToDateSpend };

/**
 * Cumulative spend of the billing month against the plan allowance, an even-pace line, and a
 * dashed straight-line projection from the average daily spend so far (said in the caption).
 */
export function MonthToDateChart({ data }: Props) {
  const captionId = useId();
  const summary = monthSummary(data);
  return (
    <figure className={`${chartThemeClass} space-y-3`} aria-labelledby={captionId} data-testid="month-to-date-chart">
      <figcaption id={captionId} className="text-sm text-zinc-700 dark:text-zinc-300">
        <span className="font-medium text-zinc-900 dark:text-zinc-100">Month to date. </span>
        {summary}
      </figcaption>
      <ul className="flex flex-wrap gap-x-4 gap-y-1 text-xs text-zinc-700 dark:text-zinc-300" aria-label="Legend">
        <li>
          <span className={lineSwatchClass} style={{ borderColor: chartColors.spend }} /> spent, cumulative
        </li>
        <li>
          <span className={lineSwatchClass} style={{ borderColor: chartColors.projection, borderTopStyle: "dashed" }} /> projection: the average daily spend so
          far, continued in a straight line
        </li>
        {data.allowance !== null ? (
          <>
            <li>
              <span className={lineSwatchClass} style={{ borderColor: chartColors.pace, borderTopStyle: "dotted" }} /> pace: the allowance spread evenly over
              the month
            </li>
            <li>
              <span className={lineSwatchClass} style={{ borderColor: chartColors.allowance }} /> plan allowance
            </li>
          </>
        ) : null}
      </ul>
      <div className="h-64 w-full sm:h-72" aria-hidden="true">
        <ResponsiveContainer width="100%" height="100%" minWidth={0}>
          <ComposedChart data={data.days} margin={chartMargin} accessibilityLayer={false}>
            <CartesianGrid vertical={false} stroke={chartColors.grid} />
            <XAxis dataKey="day" tickFormatter={formatDay} tick={axisTick} tickLine={false} minTickGap={16} interval="preserveStartEnd" />
            <YAxis tickFormatter={formatCompact} tick={axisTick} tickLine={false} axisLine={false} width={56} allowDecimals={false} />
            {data.allowance !== null ? (
              <ReferenceLine y={data.allowance} stroke={chartColors.allowance} strokeWidth={2} ifOverflow="extendDomain" className="allowance-line" />
            ) : null}
            {data.allowance !== null ? (
              <Line
                dataKey="paceUnits"
                name="pace"
                type="linear"
                stroke={chartColors.pace}
                strokeDasharray="2 4"
                strokeWidth={2}
                dot={false}
                activeDot={false}
                isAnimationActive={false}
                className="pace-line"
              />
            ) : null}
            <Line
              dataKey="projectedUnits"
              name="projection"
              type="linear"
              stroke={chartColors.projection}
              strokeDasharray="6 4"
              strokeWidth={2}
              dot={false}
              activeDot={false}
              connectNulls={false}
              isAnimationActive={false}
              className="projection-line"
            />
            <Line
              dataKey="cumulativeUnits"
              name="spent"
              type="linear"
              stroke={chartColors.spend}
              strokeWidth={2.5}
              dot={false}
              connectNulls={false}
              isAnimationActive={false}
              className="cumulative-line"
            />
            <Tooltip
              isAnimationActive={false}
              content={({ active, label }) =>
                active ? (
                  <MonthTooltip day={data.days.find((d) => d.day === label)} unit={data.unit} currency={data.currency} atMost={data.moneyAtMost} />
                ) : null
              }
            />
          </ComposedChart>
        </ResponsiveContainer>
      </div>
      <div className="sr-only">
        <table>
          <caption>{summary}</caption>
          <thead>
            <tr>
              <th scope="col">Day (UTC)</th>
              <th scope="col">Spent so far</th>
              <th scope="col">Pace</th>
              <th scope="col">Projection</th>
            </tr>
          </thead>
          <tbody>
            {data.days.map((d) => (
              <tr key={d.day}>
                <th scope="row">{formatDay(d.day)}</th>
                <td>{d.cumulativeUnits === null ? "" : formatUnits(d.cumulativeUnits, data.unit)}</td>
                <td>{d.paceUnits === null ? "" : formatUnits(d.paceUnits, data.unit)}</td>
                <td>{d.projectedUnits === null ? "" : formatUnits(d.projectedUnits, data.unit)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </figure>
  );
}

function MonthTooltip({ day, unit, currency, atMost }: { day: MonthDay | undefined; unit: string; currency: string; atMost: boolean }) {
  if (!day) return null;
  const line = (label: string, units: number | null, micros: number | null) =>
    units === null ? null : (
      <p>
        {label}: {formatUnits(units, unit)}
        {micros === null ? null : (
          <>
            {" "}
            (<ChartMoney micros={micros} currency={currency} atMost={atMost} />)
          </>
        )}
      </p>
    );
  return (
    <div className={tooltipClass}>
      <p className="font-medium">{formatDay(day.day)} (UTC)</p>
      {line("Spent so far", day.cumulativeUnits, day.cumulativeMicros)}
      {day.cumulativeUnits === null || day.projectedUnits !== day.cumulativeUnits ? line("Projected", day.projectedUnits, day.projectedMicros) : null}
      {line("Pace", day.paceUnits, day.paceMicros)}
    </div>
  );
}
