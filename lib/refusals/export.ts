import type { Db } from "@/db/client";
import { CSV_HEADER, csvLine, refusalCsvLine } from "./csv";
import { KeysetCursor } from "@/lib/keyset";
import type { RefusalFilters } from "./filters";
import { listRefusals } from "./list";

export const EXPORT_BATCH_SIZE = 2_000;

/**
 * The filtered log as CSV, newest first, one keyset batch at a time: memory stays at one batch
 * however many rows match, and each batch is a short indexed query, not a long-held cursor.
 */
export async function* refusalCsvChunks(db: Db, params: { filters: RefusalFilters; mask: boolean; batchSize?: number }): AsyncGenerator<string> {
  yield csvLine([...CSV_HEADER]);
  let before: KeysetCursor | undefined;
  for (;;) {
    const page = await listRefusals(db, { filters: params.filters, position: { before }, limit: params.batchSize ?? EXPORT_BATCH_SIZE });
    if (page.rows.length > 0) yield page.rows.map((r) => refusalCsvLine(r, params.mask)).join("");
    const last = page.rows.at(-1);
    if (!page.older || !last) return;
    before = KeysetCursor.parse(last.cursor);
  }
}

/** A byte stream of the CSV that pulls the next batch only when the client has read the last. */
export function refusalCsvStream(chunks: AsyncGenerator<string>, onError: (error: unknown) => void): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const next = await chunks.next();
        if (next.done) controller.close();
        else controller.enqueue(encoder.encode(next.value));
      } catch (error) {
        onError(error);
        controller.error(error);
      }
    },
    async cancel() {
      await chunks.return(undefined);
    },
  });
}
