import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Lifecycle } from '../../src/server/lifecycle';

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

const tick = (): Promise<void> => new Promise((r) => setImmediate(r));

/** A fake server: each start waits for its gate; the log tells what happened in which order. */
class Fake {
  readonly log: string[] = [];
  readonly gates: Array<{ promise: Promise<void>; resolve: () => void }> = [];
  starts = 0;
  /** What the setting is when each start reads it. */
  setting = 'python-a';
  failNext = false;
  readonly lifecycle = new Lifecycle({
    start: async (superseded) => {
      const n = ++this.starts;
      const setting = this.setting;
      this.log.push(`start${n}:${setting}`);
      const gate = deferred();
      this.gates.push(gate);
      await gate.promise;
      if (this.failNext) {
        this.failNext = false;
        throw new Error('boom');
      }
      this.log.push(superseded() ? `start${n}:stood-down` : `start${n}:running`);
    },
    stop: () => {
      this.log.push('stop');
      return Promise.resolve();
    },
    willRestart: () => this.log.push('restart'),
    onError: (err) => this.log.push(`error:${String(err)}`),
  });
  open(i: number): void {
    this.gates[i]?.resolve();
  }
}

describe('Lifecycle', () => {
  it('joins a start under way', async () => {
    const f = new Fake();
    const a = f.lifecycle.start();
    const b = f.lifecycle.start();
    assert.equal(a, b);
    f.open(0);
    await a;
    assert.deepEqual(f.log, ['start1:python-a', 'start1:running']);
    assert.equal(f.lifecycle.busy, false);
  });

  it('a stop during a start waits for it, which stands down, then stops', async () => {
    const f = new Fake();
    void f.lifecycle.start();
    const stopped = f.lifecycle.stop();
    await tick();
    assert.deepEqual(f.log, ['start1:python-a'], 'nothing is stopped while the start runs');
    f.open(0);
    await stopped;
    assert.deepEqual(f.log, ['start1:python-a', 'start1:stood-down', 'stop']);
  });

  it('a restart during a start runs after it, with the setting as it is then', async () => {
    const f = new Fake();
    void f.lifecycle.start();
    await tick();
    f.setting = 'python-b';
    const restarted = f.lifecycle.restart();
    await tick();
    assert.equal(f.starts, 1, 'the restart waits for the start under way');
    f.open(0);
    await tick();
    f.open(1);
    await restarted;
    assert.deepEqual(f.log, ['start1:python-a', 'restart', 'start1:stood-down', 'stop', 'start2:python-b', 'start2:running']);
  });

  it("a restart asked for during a restart's start runs once more; during its stop, not", async () => {
    const f = new Fake();
    void f.lifecycle.start();
    f.open(0);
    await tick();
    const first = f.lifecycle.restart();
    // Asked for while the first round stops: its start has not read the settings yet.
    const same = f.lifecycle.restart();
    assert.equal(first, same);
    await tick();
    assert.equal(f.starts, 2);
    // Asked for while the second start runs: it may have read the old settings.
    f.setting = 'python-c';
    void f.lifecycle.restart();
    f.open(1);
    await tick();
    f.open(2);
    await first;
    assert.equal(f.starts, 3);
    assert.deepEqual(f.log.slice(-3), ['stop', 'start3:python-c', 'start3:running']);
  });

  it('a failed start does not keep a stop from stopping', async () => {
    const f = new Fake();
    f.failNext = true;
    const started = f.lifecycle.start();
    const stopped = f.lifecycle.stop();
    f.open(0);
    await assert.rejects(started, /boom/);
    await stopped;
    assert.deepEqual(f.log, ['start1:python-a', 'error:Error: boom', 'stop']);
  });

  it('starts nothing once closed, even a restart under way', async () => {
    const f = new Fake();
    void f.lifecycle.start();
    f.open(0);
    await tick();
    const restarted = f.lifecycle.restart();
    const closed = f.lifecycle.close();
    await Promise.all([restarted, closed]);
    await f.lifecycle.start();
    await f.lifecycle.restart();
    assert.equal(f.starts, 1);
    assert.equal(f.log.filter((l) => l === 'stop').length, 2);
  });
});
