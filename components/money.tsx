import { formatMoneyParts } from "@/lib/format";

type MoneyProps = {
  /** Integer micros (millionths of the currency); a bigint for sums that may pass 2^53. */
  micros: number | bigint;
  currency: string;
  className?: string;
};

/**
 * One amount of money as staff read it: at the currency's minor digits, like every other amount in
 * its row, "< $0.01" rather than "$0.00" for an amount that is not 0. The exact amount stays
 * readable without being read twice: `title` on hover (browsers also give it to screen readers as
 * the description), `value` for machines and tests. Never wrapped between "<" and the amount.
 */
export function Money({ micros, currency, className }: MoneyProps) {
  const money = formatMoneyParts(micros, currency);
  return (
    <data value={money.value} title={`Exactly ${money.exact}`} className={className ? `whitespace-nowrap ${className}` : "whitespace-nowrap"}>
      {money.text}
    </data>
  );
}
