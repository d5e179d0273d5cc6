import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { describeWrite, formatDiagnosticsReport, formatToolResult, MAX_DIAGNOSTICS, newDiagnostics, type DiagnosticInfo } from '../../src/tools/format';

const d = (line: number, message: string, source = 'json'): DiagnosticInfo => ({ line, character: 1, message, source });

describe('formatToolResult', () => {
  it('returns the server message for a successful read', () => {
    assert.equal(formatToolResult({ ok: true, message: '     1\thello' }), '     1\thello');
  });
  it('prefixes refusals with the error code', () => {
    const text = formatToolResult({ ok: false, error: 'stale', message: 'The file changed since you read it.' });
    assert.equal(text, 'Error (stale): The file changed since you read it.');
  });
  it('appends new errors after an edit', () => {
    const text = formatToolResult(
      { ok: true, message: 'Edited /w/a.json.' },
      { path: '/w/a.json', newErrors: [d(3, 'Expected comma'), { line: 4, character: 7, message: 'Bad\n value', source: 'ts', code: '2304' }] },
    );
    assert.match(text, /^Edited \/w\/a\.json\.\n\nAfter this change the editor reports 2 new errors in \/w\/a\.json:/);
    assert.match(text, /line 3, column 1: Expected comma \[json\]/);
    assert.match(text, /line 4, column 7: Bad value \[ts 2304\]/);
    assert.match(text, /Fix them/);
  });
  it('speaks of one error in the singular', () => {
    const text = formatDiagnosticsReport('/a.json', [d(4, 'Expected comma')]);
    assert.match(text, /reports 1 new error in \/a\.json:\n  line 4, column 1: Expected comma \[json\]\nFix it before/);
  });
  it('says so when there are no new errors', () => {
    assert.match(formatToolResult({ ok: true, message: 'ok' }, { path: '/a', newErrors: [] }), /no new errors in \/a/);
  });
  it('does not tell the model an image is in a field it never sees', () => {
    const message = "Image /w/a.png: PNG, 10×10 pixels, 120 bytes. Delivered as it is (image/png). The image is in the result's `data` field (base64).";
    const text = formatToolResult({ ok: true, type: 'image', message, data: 'iVBOR' });
    assert.doesNotMatch(text, /`data` field/);
    assert.match(text, /^Image \/w\/a\.png: PNG, 10×10 pixels, 120 bytes\. Delivered as it is \(image\/png\)\. This tool returns text only, so the image itself is not passed on to you/);
  });
  it('says the same of notebook image outputs, asked for or not', () => {
    const message = [
      '<outputs index="2">',
      '[display]',
      '(image/png output, 1,024 bytes: delivered in `images`)',
      '[result]',
      '(image/jpeg output, 2,048 bytes, not shown; read with include_images=true to receive it)',
      '</outputs>',
    ].join('\n');
    const text = formatToolResult({ ok: true, type: 'notebook', message });
    assert.match(text, /^\(image\/png output, 1,024 bytes, not shown: this tool returns text only\)$/m);
    assert.match(text, /^\(image\/jpeg output, 2,048 bytes, not shown: this tool returns text only\)$/m);
    assert.doesNotMatch(text, /include_images|`images`/);
  });
  it('leaves the same words alone in a text file', () => {
    const message = "     1\tThe image is in the result's `data` field (base64).";
    assert.equal(formatToolResult({ ok: true, type: 'text', message }), message);
  });
  it('names the tool to use for wrong_tool', () => {
    const text = formatToolResult({ ok: false, error: 'wrong_tool', use: 'steadyhand.notebookEdit', message: '/w/n.ipynb is a Jupyter notebook; use notebookEdit.' });
    assert.equal(text, 'Error (wrong_tool): /w/n.ipynb is a Jupyter notebook; use notebookEdit. Use the steadyhand_edit_notebook tool.');
  });
  it('shows the diff include_diff asked for, once', () => {
    const diff = '--- a/w/a.py\n+++ b/w/a.py\n@@ -1 +1 @@\n-x\n+y\n';
    const r = { ok: true, message: 'The file /w/a.py has been updated.', diff };
    assert.equal(formatToolResult(r), r.message);
    assert.equal(formatToolResult(r, undefined, { diff: true }), `${r.message}\n\nThe diff:\n${diff}`);
    // a dry run's message holds its diff already
    const dry = { ok: true, message: `Dry run: the edit would replace 1 occurrence.\n${diff}`, diff };
    assert.equal(formatToolResult(dry, undefined, { diff: true }), dry.message);
    const withErrors = formatToolResult(r, { path: '/w/a.py', newErrors: [] }, { diff: true });
    assert.ok(withErrors.indexOf(diff) < withErrors.indexOf('no new errors'), withErrors);
  });
  it('caps long diagnostic lists', () => {
    const many = Array.from({ length: MAX_DIAGNOSTICS + 5 }, (_, i) => d(i + 1, `e${i}`));
    const text = formatDiagnosticsReport('/a', many);
    assert.match(text, /… and 5 more/);
    assert.equal(text.split('\n').filter((l) => l.startsWith('  line')).length, MAX_DIAGNOSTICS);
  });
});

describe('newDiagnostics', () => {
  it('keeps only errors not present before, even when lines moved', () => {
    const before = [d(3, 'A'), d(5, 'B')];
    const after = [d(4, 'A'), d(6, 'B'), d(7, 'C')];
    assert.deepEqual(newDiagnostics(before, after), [d(7, 'C')]);
  });
  it('counts duplicates', () => {
    assert.deepEqual(newDiagnostics([d(1, 'A')], [d(1, 'A'), d(2, 'A')]), [d(2, 'A')]);
  });
  it('treats another source as a different error', () => {
    assert.equal(newDiagnostics([d(1, 'A', 'json')], [d(1, 'A', 'eslint')]).length, 1);
  });
});

describe('describeWrite', () => {
  it('counts lines and bytes', () => {
    assert.equal(describeWrite('src/a.txt', 'a\nb\n', false), 'Create `src/a.txt` with 2 lines (4 bytes).');
    assert.equal(describeWrite('a', 'é', true), 'Overwrite `a` with 1 line (2 bytes).');
    assert.equal(describeWrite('a', '', false), 'Create `a` with 0 lines (0 bytes).');
  });
});
