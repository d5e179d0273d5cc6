import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isNotebookPath, resolveToolPath } from '../../src/common/paths';

describe('resolveToolPath', () => {
  it('resolves relative, home, URI and absolute paths', () => {
    assert.equal(resolveToolPath('src/a.py', '/w', '/home/u'), '/w/src/a.py');
    assert.equal(resolveToolPath('~/notes.md', '/w', '/home/u'), '/home/u/notes.md');
    assert.equal(resolveToolPath('file:///w/x%20y.txt', '/w', '/home/u'), '/w/x y.txt');
    assert.equal(resolveToolPath('/w/../w/b.txt', '/x', '/home/u'), '/w/b.txt');
  });
});

describe('isNotebookPath', () => {
  it('knows notebooks by their extension, in any case', () => {
    assert.equal(isNotebookPath('/w/analysis.ipynb'), true);
    assert.equal(isNotebookPath('/w/Analysis.IPYNB'), true);
    assert.equal(isNotebookPath('/w/ipynb.py'), false);
  });
});
