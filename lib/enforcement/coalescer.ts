/**
 * The batching both batchers share (reservations, and settles with releases): items callers add
 * go to the database together, at most `maxInFlight` batches at once and at most `maxBatch` items
 * each. One turn of the event loop passes first, so callers arriving together share a batch, and
 * the pending items are split evenly across the free slots: lopsided batches (1, then 60) measured
 * about a quarter slower than even ones.
 */
export class Coalescer<T> {
  private queue: T[] = [];
  private inFlight = 0;
  private scheduled = false;

  constructor(
    private readonly options: {
      maxBatch: number;
      maxInFlight: number;
      /** Sends one batch; settles every item's caller itself. */
      send: (batch: T[]) => Promise<void>;
      /** Whether a queued item is still to be sent when its batch is made (its caller may have gone). */
      wanted?: (item: T) => boolean;
    },
  ) {}

  add(item: T): void {
    this.queue.push(item);
    this.schedule();
  }

  /** Takes an item out of the queue, if it was not sent yet. */
  remove(item: T): void {
    this.queue = this.queue.filter((p) => p !== item);
  }

  private schedule(): void {
    if (this.scheduled || this.inFlight >= this.options.maxInFlight) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.drain();
    });
  }

  private drain(): void {
    const { wanted } = this.options;
    if (wanted) this.queue = this.queue.filter(wanted);
    while (this.queue.length > 0 && this.inFlight < this.options.maxInFlight) {
      const free = this.options.maxInFlight - this.inFlight;
      const batch = this.queue.splice(0, Math.min(this.options.maxBatch, Math.ceil(this.queue.length / free)));
      this.inFlight++;
      void this.options.send(batch).finally(() => {
        this.inFlight--;
        if (this.queue.length > 0) this.schedule();
      });
    }
  }
}
