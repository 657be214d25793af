import type { ReactNode } from "react";

export type Column<Row> = {
  header: ReactNode;
  /** The column's name beside each value on a phone, where a row is a card; the header when it is text. */
  label?: string;
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

const blank = (content: ReactNode) => content === null || content === undefined || content === false || content === "";

/**
 * The dashboard's one table. On a phone (below Tailwind's sm breakpoint) each row is a card that
 * names every column beside its value (`.data-table` in app/globals.css), so no column of a row is
 * out of sight; a blank cell takes no line there. Wider, a table too wide for the screen scrolls
 * sideways inside its own box, which takes keyboard focus so the hidden columns can be reached
 * without a mouse. The box is positioned (`relative`) so it also holds what is positioned inside
 * it: an sr-only label in a cell is absolutely positioned, and a box that is not its containing
 * block does not clip it, so it would stick out at its place in the wide table and widen the page.
 */
export function DataTable<Row>({ spec, caption, rows }: Props<Row>) {
  const { columns, rowKey, rowAttributes, empty, testId } = spec;
  if (rows.length === 0) return <>{empty}</>;
  return (
    <div className="relative overflow-x-auto rounded-lg border border-zinc-200 dark:border-zinc-800" tabIndex={0} role="region" aria-label={caption}>
      <table className="data-table min-w-full text-left text-sm" data-testid={testId}>
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
              {columns.map((c, i) => {
                const content = c.cell(row);
                return (
                  <td
                    key={i}
                    className={join("px-3 py-2", c.className, typeof c.cellClassName === "function" ? c.cellClassName(row) : c.cellClassName)}
                    data-label={c.label ?? (typeof c.header === "string" ? c.header : undefined)}
                    data-blank={blank(content) ? "" : undefined}
                  >
                    <div className="min-w-0">{content}</div>
                  </td>
                );
              })}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
