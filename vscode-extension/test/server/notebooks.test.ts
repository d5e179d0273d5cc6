import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { changedNotebook, unsavedNotebookResult } from '../../src/server/notebooks';

describe('notebooks with unsaved changes', () => {
  const ws = '/work/ws';
  it('names the notebook a changing call would write', () => {
    assert.equal(changedNotebook('steadyhand.notebookEdit', { file_path: 'a.ipynb' }, ws, '/home/u'), '/work/ws/a.ipynb');
    assert.equal(changedNotebook('steadyhand.edit', { file_path: '/x/B.IPYNB' }, ws, '/home/u'), '/x/B.IPYNB');
    assert.equal(changedNotebook('steadyhand.write', { file_path: '~/n.ipynb' }, ws, '/home/u'), '/home/u/n.ipynb');
    assert.equal(changedNotebook('steadyhand.undo', { file_path: 'a.ipynb' }, ws, '/home/u'), '/work/ws/a.ipynb');
  });
  it('leaves reads, dry runs and other files alone', () => {
    assert.equal(changedNotebook('steadyhand.read', { file_path: 'a.ipynb' }, ws, '/home/u'), undefined);
    assert.equal(changedNotebook('steadyhand.edit', { file_path: 'a.ipynb', dry_run: true }, ws, '/home/u'), undefined);
    assert.equal(changedNotebook('steadyhand.edit', { file_path: 'a.py' }, ws, '/home/u'), undefined);
    assert.equal(changedNotebook('steadyhand.edit', { file_path: 3 }, ws, '/home/u'), undefined);
  });
  it('refuses with edit_rejected and says what to do next', () => {
    const r = unsavedNotebookResult('/work/ws/a.ipynb');
    assert.equal(r.ok, false);
    assert.equal(r.error, 'edit_rejected');
    assert.equal(r.path, '/work/ws/a.ipynb');
    assert.match(r.message, /unsaved changes/);
    assert.match(r.message, /save or revert the notebook, then read it again and retry/);
  });
});
