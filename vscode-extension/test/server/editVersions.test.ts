import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { EditedVersions, editedUris, saveRefusal } from '../../src/server/editVersions';

describe('editedUris', () => {
  it('lists the documents of versioned edits and of plain changes, once each', () => {
    const edit = {
      documentChanges: [
        { textDocument: { uri: 'file:///w/a.py', version: 4 }, edits: [] },
        { kind: 'create', uri: 'file:///w/new.py' },
        { textDocument: { uri: 'file:///w/a.py', version: 4 }, edits: [] },
      ],
      changes: { 'file:///w/b.py': [] },
    };
    assert.deepEqual(editedUris(edit).sort(), ['file:///w/a.py', 'file:///w/b.py']);
    assert.deepEqual(editedUris(null), []);
    assert.deepEqual(editedUris({ documentChanges: [null, 3] }), []);
  });
});

describe('saveRefusal', () => {
  it('saves a document still at the version the server named', () => {
    assert.equal(saveRefusal(7, 7, undefined), undefined);
    assert.equal(saveRefusal(7, 7, 3), undefined);
  });
  it('refuses a document that moved past the version the server named', () => {
    assert.match(saveRefusal(8, 7, 7) ?? '', /changed after the edit \(version 8, not 7\): the user may be typing/);
  });
  it('without a version from the server, saves only at the version right after the applied edit', () => {
    assert.equal(saveRefusal(5, undefined, 5), undefined);
    // The didChange with the edit reached the server too late, and the user typed since.
    assert.match(saveRefusal(6, undefined, 5) ?? '', /changed after the edit was applied \(version 6, not 5\)/);
  });
  it('without a version from either side, refuses: the edit cannot be told from typing', () => {
    assert.match(saveRefusal(5, undefined, undefined) ?? '', /cannot tell the edit from the user's typing/);
  });
});

describe('EditedVersions', () => {
  it('keeps the last version per document until it is forgotten', () => {
    const v = new EditedVersions();
    v.record('file:///w/a.py', 3);
    v.record('file:///w/a.py', 5);
    assert.equal(v.get('file:///w/a.py'), 5);
    assert.equal(v.get('file:///w/b.py'), undefined);
    v.forget('file:///w/a.py');
    assert.equal(v.get('file:///w/a.py'), undefined);
  });
});
