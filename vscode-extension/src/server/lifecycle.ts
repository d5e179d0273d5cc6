/**
 * The order of starting, stopping and restarting the server. Pure (no `vscode` import).
 *
 * A language client cannot be stopped while it starts, and a start first spends a while finding
 * Python and preparing the server's environment; so a stop waits for a start under way, which
 * stands down at its next step instead of starting a client, and a restart asked for during a
 * start runs after it, with the settings as they are then.
 */

export interface LifecycleHooks {
  /**
   * Starts the server. `superseded()` turns true once a stop has been asked for: the start then
   * returns at its next step, leaving whatever it made for `stop` to take down.
   */
  start(superseded: () => boolean): Promise<void>;
  /** Takes down whatever the last start left. */
  stop(): Promise<void>;
  /** Runs at the beginning of each round of a restart. */
  willRestart?(): void;
  /** A start that a stop waited for failed unexpectedly. */
  onError?(err: unknown): void;
}

export class Lifecycle {
  private generation = 0;
  private startPromise: Promise<void> | undefined;
  private restartPromise: Promise<void> | undefined;
  private restartWanted = false;
  private closed = false;

  constructor(private readonly hooks: LifecycleHooks) {}

  /** Whether a start is under way. */
  get starting(): boolean {
    return this.startPromise !== undefined;
  }

  /** Whether a start or restart is under way (the server is on its way up, or coming back). */
  get busy(): boolean {
    return this.startPromise !== undefined || this.restartPromise !== undefined;
  }

  /** Starts the server, or joins the start under way. */
  start(): Promise<void> {
    if (this.closed) {
      return Promise.resolve();
    }
    if (!this.startPromise) {
      const generation = this.generation;
      this.startPromise = this.hooks.start(() => generation !== this.generation).finally(() => {
        this.startPromise = undefined;
      });
    }
    return this.startPromise;
  }

  /** Stops the server, after the start under way (if any) has stood down. */
  async stop(): Promise<void> {
    this.generation += 1;
    const starting = this.startPromise;
    if (starting) {
      await starting.catch((err: unknown) => this.hooks.onError?.(err));
    }
    await this.hooks.stop();
  }

  /** Stops the server for good: later starts and restarts do nothing. */
  async close(): Promise<void> {
    this.closed = true;
    await this.stop();
  }

  /**
   * Stops and starts the server. A restart asked for during one runs once more after it, unless
   * that one's start had not begun: it then reads the settings as they are now anyway.
   */
  restart(): Promise<void> {
    if (this.closed) {
      return Promise.resolve();
    }
    this.restartWanted = true;
    if (!this.restartPromise) {
      this.restartPromise = (async () => {
        while (this.restartWanted && !this.closed) {
          this.hooks.willRestart?.();
          await this.stop();
          this.restartWanted = false;
          await this.start();
        }
      })().finally(() => {
        this.restartPromise = undefined;
      });
    }
    return this.restartPromise;
  }
}
