import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  addedLines,
  changeDescription,
  changedFiles,
  changeItems,
  checkpointItems,
  checkpointLabel,
  clockOf,
  groupChanges,
  moveMarks,
  overMcp,
  type ChangeItem,
  type CheckpointItem,
} from '../../src/changes/model';
import { extensionRoot } from '../../test-support/files';

const item = (id: string, session: string, checkpoint: string | null, extra: Partial<ChangeItem> = {}): ChangeItem => ({
  id,
  time: '2026-01-02T10:05:07+01:00',
  session,
  tool: 'edit',
  path: `/w/${id}.py`,
  kind: 'change',
  added: 3,
  removed: 1,
  current: false,
  restorable: true,
  checkpoint,
  ...extra,
});
const cp = (id: string, session: string, label = ''): CheckpointItem => ({ id, session, label, time: '2026-01-02T10:00:00+01:00' });

describe('Agent changes: grouping', () => {
  it('groups by session (in the order of their newest change), then by checkpoint', () => {
    const changes = [item('c5', 'a', 'cp2'), item('c4', 'b', null), item('c3', 'a', 'cp2'), item('c2', 'a', 'cp1'), item('c1', 'a', null)];
    const groups = groupChanges(changes, [cp('cp2', 'a', 'refactor'), cp('cp1', 'a'), cp('cpX', 'c')]);
    assert.deepEqual(
      groups.map((g) => [g.session, g.count, g.groups.map((x) => [x.checkpoint?.id ?? null, x.changes.map((c) => c.id)])]),
      [
        ['a', 4, [['cp2', ['c5', 'c3']], ['cp1', ['c2']], [null, ['c1']]]],
        ['b', 1, [[null, ['c4']]]],
      ],
    );
  });
  it('keeps a checkpoint with no change after it (it can still be rewound to)', () => {
    const groups = groupChanges([item('c1', 'a', 'cp1')], [cp('cp2', 'a'), cp('cp1', 'a')]);
    assert.deepEqual(groups[0]?.groups.map((g) => [g.checkpoint?.id, g.changes.length]), [['cp2', 0], ['cp1', 1]]);
  });
  it('reads a result leaving malformed items out', () => {
    const r = { changes: [item('c1', 'a', null), { id: 3 }, null], checkpoints: [cp('cp1', 'a'), 'x'] };
    assert.deepEqual(changeItems(r).map((c) => c.id), ['c1']);
    assert.deepEqual(checkpointItems(r).map((c) => c.id), ['cp1']);
    assert.deepEqual(changeItems({}), []);
  });
});

describe('Agent changes: rows', () => {
  it('shows the tool, +A/-R and the time', () => {
    assert.equal(changeDescription(item('c', 's', null)), 'edit +3/-1 · 10:05:07');
    assert.equal(changeDescription(item('c', 's', null, { kind: 'create', tool: 'write', added: 4 })), 'write created +4 · 10:05:07');
    assert.equal(changeDescription(item('c', 's', null, { restorable: false })), 'edit +3/-1 · 10:05:07 · not restorable');
    assert.equal(clockOf('garbage'), 'garbage');
    assert.equal(checkpointLabel(cp('cp-1', 's', 'before')), 'Checkpoint “before”');
    assert.equal(checkpointLabel(cp('cp-1', 's')), 'Checkpoint cp-1');
    assert.deepEqual(changedFiles([item('a', 's', null), item('b', 's', null), item('a', 's', null)]), ['/w/a.py', '/w/b.py']);
  });
});

describe('gutter marks', () => {
  it('reads the added lines of a unified diff', () => {
    const diff = '--- a/x\n+++ b/x\n@@ -1,3 +1,4 @@\n one\n-two\n+2\n+2b\n three\n@@ -9,2 +10,2 @@\n nine\n-ten\n+10\n';
    assert.deepEqual(addedLines(diff), [1, 2, 10]);
    assert.deepEqual(addedLines(''), []);
  });
  const at = (startLine: number, startCharacter: number, endLine: number, endCharacter: number, text: string) => ({
    startLine,
    startCharacter,
    endLine,
    endCharacter,
    text,
  });
  it('marks the lines an agent writes', () => {
    assert.deepEqual([...moveMarks(new Set(), at(4, 0, 4, 6, 'second'), true)], [4]);
    // a new line put before line 3: line 3 itself is only moved
    assert.deepEqual([...moveMarks(new Set([3]), at(3, 0, 3, 0, 'x\n'), true)].sort(), [3, 4]);
    // two lines made one
    assert.deepEqual([...moveMarks(new Set([7]), at(2, 0, 4, 0, 'joined\n'), true)].sort((a, b) => a - b), [2, 6]);
    // whole lines deleted: nothing written, later marks move up
    assert.deepEqual([...moveMarks(new Set([1, 9]), at(3, 0, 5, 0, ''), true)], [1, 7]);
  });
  it('clears the mark of a line the user edits and moves the others', () => {
    const marks = new Set([2, 5, 8]);
    assert.deepEqual([...moveMarks(marks, at(5, 3, 5, 3, 'x'), false)], [2, 8]);
    assert.deepEqual([...moveMarks(marks, at(0, 0, 0, 0, 'new line\n'), false)], [3, 6, 9]);
    assert.deepEqual([...moveMarks(marks, at(5, 0, 6, 0, ''), false)], [2, 7]);
    // pressing Enter at the end of an unmarked line above moves the marks
    assert.deepEqual([...moveMarks(marks, at(3, 10, 3, 10, '\n'), false)], [2, 6, 9]);
  });
});

describe('packaging', () => {
  it('ships the gutter mark icon', async () => {
    const fs = await import('node:fs');
    const path = await import('node:path');
    const root = extensionRoot();
    assert.ok(root);
    const kept = fs.readFileSync(path.join(root, '.vscodeignore'), 'utf8').split('\n');
    assert.ok(kept.includes('!media/agent-line.svg'), 'media/agent-line.svg is left out of the VSIX');
    assert.ok(fs.existsSync(path.join(root, 'media', 'agent-line.svg')));
  });
});

describe('sessions over MCP', () => {
  it('are named so in the view', () => {
  const seen = new Map([['mcp-ab12cd', 'claude-code']]);
  assert.equal(overMcp('mcp-ab12cd', seen), 'over MCP (claude-code)');
  assert.equal(overMcp('mcp-ab12cd/reviewer', seen), 'over MCP (claude-code)');
  assert.equal(overMcp('mcp-0f0f0f', new Map()), 'over MCP');
  assert.equal(overMcp('default', seen), undefined);
  assert.equal(overMcp('mcp-notes', new Map()), undefined);
  });
});
