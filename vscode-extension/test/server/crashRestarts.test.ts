import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CrashRestarts, MAX_RESTARTS, RESTART_WINDOW_MS } from '../../src/server/crashRestarts';

describe('CrashRestarts', () => {
  it('restarts five times in three minutes, then gives up', () => {
    const c = new CrashRestarts();
    assert.equal(c.max, MAX_RESTARTS);
    assert.equal(MAX_RESTARTS, 5);
    assert.equal(RESTART_WINDOW_MS, 180_000);
    for (let i = 1; i <= 5; i++) {
      assert.deepEqual(c.crashed(i * 1_000), { restart: true, inWindow: i });
    }
    assert.deepEqual(c.crashed(6_000), { restart: false });
    assert.equal(c.total, 5);
  });
  it('forgets crashes older than the window', () => {
    const c = new CrashRestarts(2, 100);
    assert.deepEqual(c.crashed(0), { restart: true, inWindow: 1 });
    assert.deepEqual(c.crashed(50), { restart: true, inWindow: 2 });
    assert.deepEqual(c.crashed(99), { restart: false });
    assert.deepEqual(c.crashed(100), { restart: true, inWindow: 2 });
    assert.equal(c.total, 3);
  });
  it('starts counting again after a restart by hand, keeping the total', () => {
    const c = new CrashRestarts(1, 1_000);
    c.crashed(0);
    assert.deepEqual(c.crashed(1), { restart: false });
    c.reset();
    assert.deepEqual(c.crashed(2), { restart: true, inWindow: 1 });
    assert.equal(c.total, 2);
  });
});
