import { formatMoneyParts } from "@/lib/format";
import { Money } from "@/components/money";

type MoneyBarProps = { settled: number; held: number; value: number; currency: string; label: string };

/**
 * Money settled, held (reserved for calls in flight) and remaining of a value, as one bar, in
 * micros. The numbers are written out too, and the bar carries them as its accessible name.
 */
export function MoneyBar({ settled, held, value, currency, label }: MoneyBarProps) {
  const share = (n: number) => (value > 0 ? Math.min(100, (n / value) * 100) : 0);
  const settledPct = share(settled);
  const heldPct = Math.min(100 - settledPct, share(held));
  const remaining = Math.max(0, value - settled - held);
  const full = value > 0 && settled + held >= value * 0.8;
  const text = (n: number) => formatMoneyParts(n, currency).text;
  const money = (n: number) => <Money micros={n} currency={currency} />;
  const summary = `${label}: ${text(settled)} settled, ${text(held)} held, ${text(remaining)} remaining of ${text(value)}`;
  return (
    <div>
      <div role="img" aria-label={summary} className="flex h-3 w-full overflow-hidden rounded-full bg-zinc-200 dark:bg-zinc-800">
        <div className={full ? "bg-amber-600 dark:bg-amber-500" : "bg-sky-700 dark:bg-sky-500"} style={{ width: `${settledPct}%` }} />
        <div className="bg-sky-300 dark:bg-sky-800" style={{ width: `${heldPct}%` }} />
      </div>
      <p className="mt-1 break-words text-xs text-zinc-600 tabular-nums dark:text-zinc-400">
        <Money micros={settled + held} currency={currency} className="font-medium text-zinc-900 dark:text-zinc-100" /> of {money(value)} · {money(held)} held ·{" "}
        {money(remaining)} remaining
      </p>
    </div>
  );
}
