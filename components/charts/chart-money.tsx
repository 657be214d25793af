import { Money } from "@/components/money";

/**
 * Money in a chart's tooltip or table: "at most $1.20" for an endpoint of several priced parts,
 * whose counters hold units of any part and are priced at the dearest (moneyText says it in a sentence).
 */
export function ChartMoney({ micros, currency, atMost }: { micros: number; currency: string; atMost: boolean }) {
  return (
    <>
      {atMost ? "at most " : ""}
      <Money micros={micros} currency={currency} />
    </>
  );
}
