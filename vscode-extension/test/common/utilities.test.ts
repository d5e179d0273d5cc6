import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { errorText, withTimeout } from '../../src/common/utilities';

describe('withTimeout', () => {
  it('answers the value in time, undefined after the limit', async () => {
    assert.equal(await withTimeout(Promise.resolve(7), 1000), 7);
    assert.equal(await withTimeout(new Promise(() => undefined), 20), undefined);
    assert.equal(errorText(new Error('boom')), 'boom');
    assert.equal(errorText('plain'), 'plain');
  });
});
