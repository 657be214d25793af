import type { ReactNode } from "react";

export type Column<Row> = {
  header: ReactNode;
  /** Classes of the column's header and body cells, e.g. "text-right" for numbers. */
  className?: string;
  /** Classes of the body cells only; a function when they depend on the row. */
  cellClassName?: string | ((row: Row) => string);
  cell: (row: Row) => ReactNode;
};

/** What a row carries for tests and styling: `data-*` attributes and a class. */
export type RowAttributes = { className?: string } & { [data: `data-${string}`]: string | undefined };

/** One kind of table: its columns, how its rows are told apart, and what stands in for no rows. */
export type TableSpec<Row> = {
  columns: Column<Row>[];
  rowKey: (row: Row) => string | number;
  rowAttributes?: (row: Row) => RowAttributes;
  /** Shown instead of the table when there are no rows. */
  empty: ReactNode;
  testId?: string;
};

type Props<Row> = {
  spec: TableSpec<Row>;
  /** Names the table (its caption) and its scroll box, for screen readers and tests. */
  caption: string;
  rows: readonly Row[];
};

const join = (...classes: (string | undefined)[]) => classes.filter(Boolean).join(" ");

/**
 * The dashboard's one table. On narrow screens it scrolls sideways inside its own box, which takes
 * keyboard focus so the hidden columns can be reached without a mouse. The box is positioned
 * (`relative`) so it also holds what is positioned inside it: an sr-only label in a cell is
 * absolutely positioned, and a box that is not its containing block does not clip it, so it would
 * stick out at its place in the wide table and widen the whole page.
 */
export function DataTable<Row>({ spec, caption, rows }: Props<Row>) {
  const { columns, rowKey, rowAttributes, empty, testId } = spec;
  if (rows.length === 0) return <>{empty}</>;
  return (
    <div className="relative overflow-x-auto rounded-lg border border-zinc-200 dark:border-zinc-800" tabIndex={0} role="region" aria-label={caption}>
      <table className="min-w-full text-left text-sm" data-testid={testId}>
        <caption className="sr-only">{caption}</caption>
        <thead className="bg-zinc-100 text-xs uppercase tracking-wide text-zinc-700 dark:bg-zinc-800 dark:text-zinc-300">
          <tr>
            {columns.map((c, i) => (
              <th key={i} scope="col" className={join("px-3 py-2", c.className)}>
                {c.header}
              </th>
            ))}
          </tr>
        </thead>
        <tbody className="divide-y divide-zinc-200 dark:divide-zinc-800">
          {rows.map((row) => (
            <tr key={rowKey(row)} {...rowAttributes?.(row)}>
              {columns.map((c, i) => (
                <td key={i} className={join("px-3 py-2", c.className, typeof c.cellClassName === "function" ? c.cellClassName(row) : c.cellClassName)}>
                  {c.cell(row)}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
