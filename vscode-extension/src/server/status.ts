/**
 * The server's state as the extension reports it (`starting`, `running`, `stopped`, `failed`, and
 * why it failed), and the calls waiting for it to run. Pure (no `vscode` import).
 */
import type { ServerState } from '../api';

interface Waiter {
  resolve: () => void;
  reject: (e: Error) => void;
}

export class ServerStateModel {
  private current: ServerState = 'stopped';
  private reason: string | undefined;
  private waiters: Waiter[] = [];

  constructor(
    private readonly hooks: {
      /** Whether a start or restart is under way (a stopped server is then on its way up). */
      busy(): boolean;
      /** The state changed (the status event). */
      changed(): void;
    },
  ) {}

  get state(): ServerState {
    return this.current;
  }

  /** Why the server is not running, when it failed. */
  get error(): string | undefined {
    return this.reason;
  }

  /** Moves to `state`: calls waiting for the server go on once it runs and fail once it cannot. */
  set(state: ServerState, error?: string): void {
    this.current = state;
    this.reason = error;
    if (state === 'running') {
      for (const w of this.waiters.splice(0)) {
        w.resolve();
      }
    } else if (state === 'failed' || state === 'stopped') {
      const why = state === 'failed' ? (error ?? 'the Steadyhand server failed to start') : 'the Steadyhand server was stopped';
      for (const w of this.waiters.splice(0)) {
        w.reject(new Error(why));
      }
    }
    this.hooks.changed();
  }

  /**
   * Resolves once the server runs; rejects at once when it failed or is stopped with no start
   * under way, when it fails or is stopped meanwhile, or after `timeoutMs`.
   */
  ready(timeoutMs: number): Promise<void> {
    if (this.current === 'running') {
      return Promise.resolve();
    }
    if (this.current === 'failed') {
      return Promise.reject(new Error(this.reason ?? 'the Steadyhand server is not running'));
    }
    if (this.current === 'stopped' && !this.hooks.busy()) {
      return Promise.reject(new Error('the Steadyhand server is stopped'));
    }
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`the Steadyhand server did not start within ${timeoutMs} ms`)), timeoutMs);
      this.waiters.push({
        resolve: () => {
          clearTimeout(timer);
          resolve();
        },
        reject: (e) => {
          clearTimeout(timer);
          reject(e);
        },
      });
    });
  }
}
