/**
 * Group commit: requests submitted in the same turn of the event loop are run together in one
 * call (one transaction, so one fsync), and each is settled only after that call has finished,
 * that is after the commit. One batch runs at a time: requests that arrive while a batch runs (or
 * waits for a lock) form the next one. Each request keeps its own outcome; if the call fails, every
 * request in the batch is rejected with that error and nothing was committed.
 */
export class GroupCommit<In, Out> {
  private pending: Array<{ input: In; resolve: (out: Out) => void; reject: (err: unknown) => void }> = [];
  /** When the oldest pending request was submitted (performance.now()). */
  private oldest = 0;
  private busy = false;

  /** `runBatch` gets the inputs and when the oldest of them was submitted, to bound its wait. */
  constructor(private readonly runBatch: (inputs: readonly In[], submittedAt: number) => Out[] | Promise<Out[]>) {}

  /** Queues one request; resolves with its outcome once its batch has committed. */
  submit(input: In): Promise<Out> {
    return new Promise((resolve, reject) => {
      if (this.pending.length === 0) {
        this.oldest = performance.now();
        if (!this.busy) setImmediate(() => void this.flush());
      }
      this.pending.push({ input, resolve, reject });
    });
  }

  private async flush(): Promise<void> {
    const batch = this.pending;
    this.pending = [];
    this.busy = true;
    try {
      const outcomes = await this.runBatch(
        batch.map((request) => request.input),
        this.oldest,
      );
      batch.forEach((request, i) => request.resolve(outcomes[i]!));
    } catch (err) {
      for (const request of batch) request.reject(err);
    } finally {
      this.busy = false;
      if (this.pending.length > 0) setImmediate(() => void this.flush());
    }
  }
}
