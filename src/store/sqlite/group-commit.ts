/**
 * Group commit: requests submitted in the same turn of the event loop are run together in one
 * call (one transaction, so one fsync), and each is settled only after that call returns, that is
 * after the commit. Each request keeps its own outcome; if the call throws, every request in the
 * batch is rejected with that error and nothing was committed.
 */
export class GroupCommit<In, Out> {
  private pending: Array<{ input: In; resolve: (out: Out) => void; reject: (err: unknown) => void }> = [];

  constructor(private readonly runBatch: (inputs: readonly In[]) => Out[]) {}

  /** Queues one request; resolves with its outcome once its batch has committed. */
  submit(input: In): Promise<Out> {
    return new Promise((resolve, reject) => {
      if (this.pending.length === 0) setImmediate(() => this.flush());
      this.pending.push({ input, resolve, reject });
    });
  }

  private flush(): void {
    const batch = this.pending;
    this.pending = [];
    let outcomes: Out[];
    try {
      outcomes = this.runBatch(batch.map((request) => request.input));
    } catch (err) {
      for (const request of batch) request.reject(err);
      return;
    }
    batch.forEach((request, i) => request.resolve(outcomes[i]!));
  }
}
