import { formatCount } from "@/lib/format";

type UsageBarProps = { used: number; held: number; value: number; label: string };

/**
 * Used (settled), held (reserved, not yet settled) and remaining as one bar. The numbers are also
 * written out, and the bar carries them as its accessible name.
 */
export function UsageBar({ used, held, value, label }: UsageBarProps) {
  const share = (n: number) => (value > 0 ? Math.min(100, (n / value) * 100) : 0);
  const usedPct = share(used);
  const heldPct = Math.min(100 - usedPct, share(held));
  const remaining = Math.max(0, value - used - held);
  const full = value > 0 && used + held >= value * 0.8;
  const summary = `${label}: ${formatCount(used)} used, ${formatCount(held)} held, ${formatCount(remaining)} remaining of ${formatCount(value)}`;
  return (
    <div>
      <div role="img" aria-label={summary} className="flex h-3 w-full overflow-hidden rounded-full bg-zinc-200 dark:bg-zinc-800">
        <div className={full ? "bg-amber-600 dark:bg-amber-500" : "bg-sky-700 dark:bg-sky-500"} style={{ width: `${usedPct}%` }} />
        <div className="bg-sky-300 dark:bg-sky-800" style={{ width: `${heldPct}%` }} />
      </div>
      <p className="mt-1 text-xs text-zinc-600 tabular-nums dark:text-zinc-400">
        <span className="font-medium text-zinc-900 dark:text-zinc-100">{formatCount(used)}</span> used · {formatCount(held)} held · {formatCount(remaining)}{" "}
        remaining of {formatCount(value)}
      </p>
    </div>
  );
}
