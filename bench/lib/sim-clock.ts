// The simulated clock shared by the sandbox, the app's services and the driver of the
// simulated day: it only moves when the driver moves it.
export class SimClock {
  constructor(private ms: number) {}
  now(): Date {
    return new Date(this.ms);
  }
  get millis(): number {
    return this.ms;
  }
  set(ms: number): void {
    if (ms < this.ms) throw new Error("the simulated clock never goes back");
    this.ms = ms;
  }
}
