import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ServerLogParser } from '../../../src/common/log/serverLog';

describe('ServerLogParser', () => {
  it('routes Python logging records by level and strips the timestamp', () => {
    const p = new ServerLogParser();
    assert.deepEqual(p.line('2026-11-30 03:05:15,658 INFO steadyhand: steadyhand 0.1.0 ready (pid 1)'), {
      level: 'info',
      text: 'steadyhand: steadyhand 0.1.0 ready (pid 1)',
    });
    assert.equal(p.line('2026-11-30 03:05:15,658 WARNING steadyhand.watcher: inotify limit').level, 'warn');
    assert.equal(p.line('  continuation of the warning').level, 'warn');
    assert.equal(p.line('Traceback (most recent call last):').level, 'error');
    assert.equal(p.line('  File "x.py", line 1').level, 'error');
    assert.equal(p.line('2026-11-30 03:05:15,658 DEBUG pygls: x').level, 'debug');
  });
});
