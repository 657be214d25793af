"use client";

import { Area, AreaChart, ResponsiveContainer } from "recharts";
import type { EndpointTrend } from "@/lib/spend/overview";
import { formatUnits } from "@/lib/format";
import { sparklineSummary } from "./chart-data";
import { chartColors, chartThemeClass } from "./chart-theme";

type Props = { trend: EndpointTrend };

/** A small trend of the last 14 days for the overview; its numbers are its accessible name. */
export function SpendSparkline({ trend }: Props) {
  const summary = sparklineSummary(trend.points, trend.unit, trend.currency, trend.totalUnits, trend.totalMoneyMicros, trend.moneyAtMost);
  return (
    <div className={chartThemeClass} data-testid={`sparkline-${trend.key}`}>
      <p className="text-xs text-zinc-600 dark:text-zinc-400" aria-hidden="true">
        Last {trend.points.length} days: {formatUnits(trend.totalUnits, trend.unit)}
      </p>
      <div role="img" aria-label={summary} title={summary} className="h-10 w-full">
        {/* The label says it all; the drawing itself is hidden from assistive technology. */}
        <div aria-hidden="true" className="h-full w-full">
          <ResponsiveContainer width="100%" height="100%" minWidth={0}>
            <AreaChart data={trend.points} margin={{ top: 2, right: 0, bottom: 2, left: 0 }} accessibilityLayer={false}>
              <Area
                dataKey="units"
                type="monotone"
                stroke={chartColors.spend}
                strokeWidth={1.5}
                fill={chartColors.spend}
                fillOpacity={0.15}
                dot={false}
                activeDot={false}
                isAnimationActive={false}
              />
            </AreaChart>
          </ResponsiveContainer>
        </div>
      </div>
    </div>
  );
}
