// A provider's stream, passed through chunk by chunk, that settles its reservation once it ends:
// from the usage the provider reported when it finished, at the worst case when it broke or was
// abandoned after output began (the safe direction: never below what was reported), released
// when it failed before anything arrived.
import type { Charge, Hold } from "./guard.js";

export type StreamAccounting<Item> = {
  /** Reads one chunk; the accountant keeps what it reported. */
  see(item: Item): void;
  /**
   * The charge to settle with when the stream finished normally; undefined if no usage was
   * reported (the worst case stays), "release" if the stream carried only an error.
   */
  final(): Charge | "release" | undefined;
  /** The charge when the stream ended early: what was reported, the worst case for what was not. */
  partial(): Charge;
};

export async function* settledStream<Item>(source: AsyncIterable<Item>, held: Hold, accounting: StreamAccounting<Item>): AsyncGenerator<Item> {
  let received = 0;
  let finished = false;
  try {
    for await (const item of source) {
      received++;
      accounting.see(item);
      yield item;
    }
    finished = true;
  } finally {
    if (received === 0 && !finished) await held.release();
    else if (finished) {
      const final = accounting.final();
      await (final === "release" ? held.release() : final ? held.settle(final) : held.keepWorstCase());
    } else await held.settle(accounting.partial());
  }
}

/** The SDK's own Stream class around our generator, so the caller gets the type it expects. */
export function likeStream<S extends { controller: AbortController }>(original: S, iterate: () => AsyncIterator<unknown>): S {
  const Ctor = (original as unknown as { constructor: new (it: () => AsyncIterator<unknown>, c: AbortController) => S }).constructor;
  return new Ctor(iterate, original.controller);
}
