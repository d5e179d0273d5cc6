import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isCommandResult, notRunningResult, requestErrorResult } from '../../src/common/results';
import { formatToolResult } from '../../src/tools/format';

describe('request errors', () => {
  it('maps InvalidParams to invalid_params with the server text', () => {
    assert.deepEqual(requestErrorResult({ code: -32602, message: 'unknown key filePath (did you mean file_path?)' }), {
      ok: false,
      error: 'invalid_params',
      message: 'unknown key filePath (did you mean file_path?)',
    });
  });
  it('maps cancellation and other failures', () => {
    assert.equal(requestErrorResult({ code: -32800, message: 'x' }).error, 'cancelled');
    assert.equal(requestErrorResult(new Error('connection closed')).error, 'server_error');
  });
  it('gives the model a next step when the server is not running', () => {
    for (const r of [notRunningResult(), notRunningResult('No usable Python was found.'), requestErrorResult({ code: -32096, message: 'Client is not running' })]) {
      assert.equal(r.error, 'server_not_running');
      assert.match(r.message, /^The Steadyhand server is not running(: No usable Python was found)?\. Do not retry now; ask the user to run 'Steadyhand: Restart Server'/);
      assert.match(formatToolResult(r), /^Error \(server_not_running\): .*Steadyhand output channel\.$/);
    }
  });
  it('recognizes result objects', () => {
    assert.equal(isCommandResult({ ok: true, message: '' }), true);
    assert.equal(isCommandResult({ ok: 'yes', message: '' }), false);
    assert.equal(isCommandResult(null), false);
  });
});
