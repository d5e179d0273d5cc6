/**
 * When a server that exited is started again: up to `max` times in `windowMs`, after which the
 * extension gives up and says so. Pure (no `vscode` import).
 */

export const MAX_RESTARTS = 5;
export const RESTART_WINDOW_MS = 3 * 60_000;

export type CrashDecision = { restart: true; inWindow: number } | { restart: false };

export class CrashRestarts {
  private times: number[] = [];
  private count = 0;

  constructor(
    readonly max = MAX_RESTARTS,
    readonly windowMs = RESTART_WINDOW_MS,
  ) {}

  /** Restarts after a crash in this window's life. */
  get total(): number {
    return this.count;
  }

  /** Forgets the recent crashes (a restart asked for by hand or by a changed setting). */
  reset(): void {
    this.times = [];
  }

  /** The server crashed at `now` (ms): restart it (the how-manieth in the window), or not. */
  crashed(now: number): CrashDecision {
    this.times = this.times.filter((t) => now - t < this.windowMs);
    if (this.times.length >= this.max) {
      return { restart: false };
    }
    this.times.push(now);
    this.count += 1;
    return { restart: true, inWindow: this.times.length };
  }
}
