// Runs async jobs one at a time, so reads-then-writes of the sandbox's state
// (lazy expiry, actions, order creation) never interleave.
export class SerialQueue {
  private tail: Promise<unknown> = Promise.resolve();

  run<T>(job: () => Promise<T>): Promise<T> {
    const result = this.tail.then(job);
    this.tail = result.catch(() => undefined);
    return result;
  }

  /** Resolves once every job queued so far has settled. */
  async idle(): Promise<void> {
    await this.run(async () => undefined);
  }
}
