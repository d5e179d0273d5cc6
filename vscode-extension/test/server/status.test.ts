import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ServerStateModel } from '../../src/server/status';

function model(busy = false): { m: ServerStateModel; changes: string[] } {
  const changes: string[] = [];
  const m: ServerStateModel = new ServerStateModel({ busy: () => busy, changed: () => changes.push(m.state) });
  return { m, changes };
}

describe('ServerStateModel', () => {
  it('announces every change of state', () => {
    const { m, changes } = model();
    m.set('starting');
    m.set('running');
    m.set('failed', 'no Python');
    assert.deepEqual(changes, ['starting', 'running', 'failed']);
    assert.equal(m.error, 'no Python');
    m.set('starting');
    assert.equal(m.error, undefined);
  });
  it('lets a call made during a start wait for the server to run', async () => {
    const { m } = model();
    m.set('starting');
    let done = false;
    const waiting = m.ready(1_000).then(() => (done = true));
    await Promise.resolve();
    assert.equal(done, false);
    m.set('running');
    await waiting;
    assert.equal(done, true);
    await m.ready(1_000);
  });
  it('fails the waiting calls with the reason once the start fails, and later calls at once', async () => {
    const { m } = model();
    m.set('starting');
    const waiting = m.ready(1_000);
    m.set('failed', 'Steadyhand cannot start: no Python 3.11 or newer was found');
    await assert.rejects(waiting, /no Python 3\.11 or newer/);
    await assert.rejects(m.ready(1_000), /no Python 3\.11 or newer/);
  });
  it('fails the waiting calls when the server is stopped', async () => {
    const { m } = model();
    m.set('starting');
    const waiting = m.ready(1_000);
    m.set('stopped');
    await assert.rejects(waiting, /was stopped/);
  });
  it('answers a stopped server at once unless a start is under way', async () => {
    await assert.rejects(model(false).m.ready(1_000), /is stopped/);
    const { m } = model(true);
    const waiting = m.ready(1_000);
    m.set('running');
    await waiting;
  });
  it('gives up after the time limit', async () => {
    const { m } = model();
    m.set('starting');
    await assert.rejects(m.ready(10), /did not start within 10 ms/);
  });
});
