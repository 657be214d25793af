import { setImmediate as turn } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { Coalescer } from "./coalescer";

// The batching both batchers share: callers arriving together share a batch, split evenly across
// the free slots, and a lone caller beside a batch in flight is not held back.

/** A coalescer whose sends stay in flight until released, recording every batch. */
function harness(options: { maxInFlight: number }) {
  const batches: number[][] = [];
  const open: (() => void)[] = [];
  const coalescer = new Coalescer<number>({
    maxBatch: 128,
    ...options,
    send: (batch) => {
      batches.push(batch);
      return new Promise<void>((resolve) => open.push(resolve));
    },
  });
  return { coalescer, batches, finishOne: () => open.shift()?.() };
}

describe("Coalescer", () => {
  it("sends what arrives in one turn together, split evenly over the free slots", async () => {
    const h = harness({ maxInFlight: 2 });
    for (let i = 0; i < 10; i++) h.coalescer.add(i);
    await turn();
    expect(h.batches.map((b) => b.length)).toEqual([5, 5]);
  });

  it("sends a lone item at once beside a batch in flight, and nothing past the slots", async () => {
    const h = harness({ maxInFlight: 2 });
    h.coalescer.add(1);
    await turn();
    h.coalescer.add(2);
    await turn();
    expect(h.batches).toEqual([[1], [2]]);
    h.coalescer.add(3);
    await turn();
    expect(h.batches).toHaveLength(2);
    h.finishOne();
    await turn();
    await turn();
    expect(h.batches).toEqual([[1], [2], [3]]);
  });
});
