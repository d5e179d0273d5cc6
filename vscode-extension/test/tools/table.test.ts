import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { COMMANDS, SERVER_COMMANDS } from '../../src/common/commands';
import { schemaShape, toolForCommand, toolInputToCommand, TOOL_NAMES, TOOLS } from '../../src/tools/table';
import * as fs from 'node:fs';
import { packageJson, repoFile } from '../../test-support/files';

const pkg = packageJson<{
  activationEvents: string[];
  contributes: {
    languageModelTools: Array<{
      name: string;
      displayName: string;
      modelDescription: string;
      inputSchema: { type: string; properties: Record<string, { type: string }>; required: string[] };
    }>;
    configuration: { properties: Record<string, { type: string; default: unknown; enum?: string[]; items?: { type: string }; scope?: string }> };
    commands: Array<{ command: string; title: string; category?: string }>;
    menus: { commandPalette: Array<{ command: string; when?: string }> };
  };
}>();

describe('tool input → server command', () => {
  it('maps read with its optional range', () => {
    const r = toolInputToCommand('steadyhand_read_file', { file_path: '/w/a.py', offset: 10, limit: 5 }, 'default');
    assert.deepEqual(r.ok && { command: r.command, params: r.params }, {
      command: 'steadyhand.read',
      params: { file_path: '/w/a.py', offset: 10, limit: 5, session: 'default' },
    });
  });
  it('maps edit and keeps replace_all', () => {
    const r = toolInputToCommand('steadyhand_edit_file', { file_path: 'a.py', old_string: 'x', new_string: 'y', replace_all: true }, 's1');
    assert.deepEqual(r.ok && r.params, { file_path: 'a.py', old_string: 'x', new_string: 'y', replace_all: true, session: 's1' });
    assert.equal(r.ok && r.command, COMMANDS.edit);
  });
  it('maps write, empty content allowed', () => {
    const r = toolInputToCommand('steadyhand_write_file', { file_path: '/w/new/b.txt', content: '' }, 'default');
    assert.equal(r.ok && r.command, 'steadyhand.write');
    assert.deepEqual(r.ok && r.params, { file_path: '/w/new/b.txt', content: '', session: 'default' });
  });
  it('refuses a missing required field, naming it', () => {
    const r = toolInputToCommand('steadyhand_edit_file', { file_path: 'a', new_string: 'y' }, 'default');
    assert.equal(r.ok, false);
    assert.match(!r.ok ? r.error : '', /missing required parameter old_string/);
  });
  it('hints at snake_case for camelCase keys', () => {
    const r = toolInputToCommand('steadyhand_read_file', { filePath: '/a' }, 'default');
    assert.equal(r.ok, false);
    assert.match(!r.ok ? r.error : '', /unknown parameter filePath \(did you mean file_path\?\)/);
  });
  it('checks types and bounds', () => {
    const r = toolInputToCommand('steadyhand_read_file', { file_path: '/a', offset: -1, limit: 2.5 }, 'default');
    assert.equal(r.ok, false);
    assert.match(!r.ok ? r.error : '', /offset must be an integer >= 0.*limit must be an integer >= 1/);
    // the server reads offset 0 as the first line: the tool takes it too
    assert.equal(toolInputToCommand('steadyhand_read_file', { file_path: '/a', offset: 0 }, 'd').ok, true);
    const r2 = toolInputToCommand('steadyhand_edit_file', { file_path: '/a', old_string: 1, new_string: 'y', replace_all: 'yes' }, 'd');
    assert.match(!r2.ok ? r2.error : '', /old_string must be a string.*replace_all must be a boolean/);
  });
  it('refuses non-object input and unknown tools', () => {
    assert.equal(toolInputToCommand('steadyhand_read_file', 'a.py', 'd').ok, false);
    assert.equal(toolInputToCommand('steadyhand_read_file', null, 'd').ok, false);
    assert.equal(toolInputToCommand('nope', {}, 'd').ok, false);
  });
  it('passes every read parameter the tool shows, and checks pages as the server does', () => {
    const r = toolInputToCommand('steadyhand_read_file', { file_path: '/w/doc.pdf', pages: '1-10, 12' }, 'd');
    assert.deepEqual(r.ok && r.params, { file_path: '/w/doc.pdf', pages: '1-10, 12', session: 'd' });
    for (const pages of ['', 'a', '1-2-3', '1234567890']) {
      const bad = toolInputToCommand('steadyhand_read_file', { file_path: '/w/doc.pdf', pages }, 'd');
      assert.match(!bad.ok ? bad.error : '', /pages must be a string matching/, pages);
    }
    // image outputs never reach a model through a text-only tool result
    const images = toolInputToCommand('steadyhand_read_file', { file_path: '/w/n.ipynb', include_images: true }, 'd');
    assert.match(!images.ok ? images.error : '', /unknown parameter include_images/);
  });
  it('passes include_diff to every changing tool', () => {
    for (const spec of TOOLS.filter((t) => t.mutates)) {
      assert.ok(spec.fields.some((f) => f.name === 'include_diff'), spec.tool);
    }
    const e = toolInputToCommand('steadyhand_edit_file', { file_path: 'a', old_string: 'x', new_string: 'y', include_diff: true }, 'd');
    assert.deepEqual(e.ok && e.params, { file_path: 'a', old_string: 'x', new_string: 'y', include_diff: true, session: 'd' });
  });
  it('checks the lengths the server bounds', () => {
    const long = toolInputToCommand('steadyhand_edit_notebook', { file_path: '/n.ipynb', cell_id: 'c'.repeat(257) }, 'd');
    assert.match(!long.ok ? long.error : '', /cell_id must be a string of 1 to 256 characters/);
    // characters, not UTF-16 units: 256 astral characters fit
    const astral = toolInputToCommand('steadyhand_edit_notebook', { file_path: '/n.ipynb', cell_id: '😀'.repeat(256) }, 'd');
    assert.equal(astral.ok, true);
  });
  it('passes expected_replacements and dry_run to edit and dry_run to write', () => {
    const e = toolInputToCommand('steadyhand_edit_file', { file_path: 'a', old_string: 'x', new_string: 'y', expected_replacements: 3, dry_run: true }, 'd');
    assert.deepEqual(e.ok && e.params, { file_path: 'a', old_string: 'x', new_string: 'y', expected_replacements: 3, dry_run: true, session: 'd' });
    const w = toolInputToCommand('steadyhand_write_file', { file_path: 'a', content: 'x', dry_run: false }, 'd');
    assert.deepEqual(w.ok && w.params, { file_path: 'a', content: 'x', dry_run: false, session: 'd' });
    const bad = toolInputToCommand('steadyhand_edit_file', { file_path: 'a', old_string: 'x', new_string: 'y', expected_replacements: 0 }, 'd');
    assert.match(!bad.ok ? bad.error : '', /expected_replacements must be an integer >= 1/);
  });
  it('maps multi-edit and checks each edit', () => {
    const edits = [{ old_string: 'a', new_string: 'b' }, { old_string: 'c', new_string: 'd', replace_all: true, expected_replacements: 2 }];
    const r = toolInputToCommand('steadyhand_multi_edit_file', { file_path: '/w/a.py', edits }, 's');
    assert.equal(r.ok && r.command, COMMANDS.multiEdit);
    assert.deepEqual(r.ok && r.params, { file_path: '/w/a.py', edits, session: 's' });
    const bad = toolInputToCommand('steadyhand_multi_edit_file', { file_path: 'a', edits: [{ old_string: 'a' }, 'x', { old_string: 'a', new_string: 'b', oldString: 'c' }] }, 's');
    const error = !bad.ok ? bad.error : '';
    assert.match(error, /missing required parameter edits\[0\]\.new_string/);
    assert.match(error, /edits\[1\] must be an object with old_string, new_string/);
    assert.match(error, /unknown parameter edits\[2\]\.oldString \(did you mean old_string\?\)/);
    const empty = toolInputToCommand('steadyhand_multi_edit_file', { file_path: 'a', edits: [] }, 's');
    assert.match(!empty.ok ? empty.error : '', /edits must be a non-empty array/);
  });
  it('maps notebook edits, checks enumerations and takes notebook_path', () => {
    const r = toolInputToCommand('steadyhand_edit_notebook', { notebook_path: '/w/n.ipynb', cell_id: 'c1', new_source: 'x = 1', edit_mode: 'replace' }, 'd');
    assert.equal(r.ok && r.command, COMMANDS.notebookEdit);
    assert.deepEqual(r.ok && r.params, { file_path: '/w/n.ipynb', cell_id: 'c1', new_source: 'x = 1', edit_mode: 'replace', session: 'd' });
    const bad = toolInputToCommand('steadyhand_edit_notebook', { file_path: '/w/n.ipynb', edit_mode: 'append', cell_type: 'python' }, 'd');
    assert.match(!bad.ok ? bad.error : '', /edit_mode must be one of "replace", "insert", "delete".*cell_type must be one of "code", "markdown", "raw"/);
    const both = toolInputToCommand('steadyhand_edit_notebook', { file_path: '/a.ipynb', notebook_path: '/b.ipynb', cell_id: 'c' }, 'd');
    assert.match(!both.ok ? both.error : '', /pass file_path or notebook_path, not both/);
  });
  it('names the tool of a server command', () => {
    assert.equal(toolForCommand('steadyhand.notebookEdit'), 'steadyhand_edit_notebook');
    assert.equal(toolForCommand('steadyhand.edit'), 'steadyhand_edit_file');
    assert.equal(toolForCommand('steadyhand.undo'), undefined);
  });
  it('drops explicit nulls of optional fields', () => {
    const r = toolInputToCommand('steadyhand_read_file', { file_path: '/a', offset: null }, 'd');
    assert.deepEqual(r.ok && r.params, { file_path: '/a', session: 'd' });
  });
});

/** A declared schema without its descriptions and defaults, `required` sorted. */
function shapeOf(schema: unknown): unknown {
  if (Array.isArray(schema)) {
    return (schema as unknown[]).map(shapeOf);
  }
  if (typeof schema !== 'object' || schema === null) {
    return schema;
  }
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(schema)) {
    if (k === 'description' || k === 'default') {
      continue;
    }
    out[k] = k === 'required' && Array.isArray(v) ? [...(v as string[])].sort() : k === 'properties' ? Object.fromEntries(Object.entries(v as object).map(([n, p]) => [n, shapeOf(p)])) : shapeOf(v);
  }
  return out;
}

function sortRequired(shape: unknown): unknown {
  return shapeOf(JSON.parse(JSON.stringify(shape)));
}

describe('package.json ↔ tool specs', () => {
  const declared = pkg.contributes.languageModelTools;
  it('declares exactly the tools the code registers', () => {
    assert.deepEqual(
      declared.map((t) => t.name),
      [...TOOL_NAMES],
    );
  });
  for (const spec of TOOLS) {
    it(`${spec.tool}: schema matches the command's parameters`, () => {
      const t = declared.find((d) => d.name === spec.tool);
      assert.ok(t, `${spec.tool} missing in package.json`);
      assert.match(t.name, /^(?!copilot_|vscode_)[\w-]+$/);
      assert.equal(t.inputSchema.type, 'object');
      assert.deepEqual(shapeOf(t.inputSchema), sortRequired(schemaShape(spec.fields)));
      assert.ok(t.modelDescription.length > 200, 'model description teaches the contract');
      assert.ok(pkg.activationEvents.includes(`onLanguageModelTool:${spec.tool}`));
    });
  }
  it('model descriptions teach read-before-edit, prefer edit, and the error codes', () => {
    const edit = declared.find((d) => d.name === 'steadyhand_edit_file')?.modelDescription ?? '';
    const write = declared.find((d) => d.name === 'steadyhand_write_file')?.modelDescription ?? '';
    const read = declared.find((d) => d.name === 'steadyhand_read_file')?.modelDescription ?? '';
    assert.match(read, /before you edit/);
    assert.match(edit, /Prefer this tool over steadyhand_write_file/);
    assert.match(write, /use steadyhand_edit_file instead/);
    for (const code of ['not_read', 'stale', 'partial_view', 'no_match', 'ambiguous', 'no_change', 'edit_rejected', 'outside_workspace']) {
      assert.match(edit, new RegExp(code), code);
    }
    for (const code of ['not_found', 'too_large', 'binary', 'not_regular_file', 'is_directory']) {
      assert.match(read, new RegExp(code), code);
    }
  });
  it('names only tools that exist', () => {
    for (const t of declared) {
      for (const name of t.modelDescription.match(/steadyhand_\w+/g) ?? []) {
        assert.ok(TOOL_NAMES.includes(name), `${t.name} mentions ${name}`);
      }
    }
  });
  it('contributes the extension\'s own commands under steadyhand.client.*', () => {
    for (const c of pkg.contributes.commands.filter((c) => !SERVER_COMMANDS.includes(c.command))) {
      assert.match(c.command, /^steadyhand\.client\./);
    }
  });
  it('contributes every server command, hidden from the Command Palette', () => {
    // Contributed commands exist (and activate the extension) before the server runs, so a call
    // while it starts, restarts or cannot run gets a result instead of "command not found".
    const contributed = pkg.contributes.commands.map((c) => c.command);
    for (const command of SERVER_COMMANDS) {
      assert.ok(contributed.includes(command), `${command} not contributed`);
      const hidden = pkg.contributes.menus.commandPalette.find((m) => m.command === command);
      assert.equal(hidden?.when, 'false', `${command} shows in the Command Palette (it takes an object argument)`);
    }
    for (const command of Object.values(COMMANDS)) {
      assert.ok(SERVER_COMMANDS.includes(command), command);
    }
  });
});

describe('the docs name the tools there are', () => {
  const NUMBERS = ['no', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine'];
  for (const doc of [['README.md'], ['docs', 'vscode.md'], ['vscode-extension', 'README.md']]) {
    it(`${doc.join('/')} names every language-model tool, and no other`, () => {
      const file = repoFile(...doc);
      if (!file) {
        return;
      }
      const text = fs.readFileSync(file, 'utf8');
      const named = new Set([...text.matchAll(/\bsteadyhand_[a-z_]+\b/g)].map((m) => m[0]));
      assert.deepEqual([...named].sort(), [...TOOL_NAMES].sort());
    });
  }
  it('README.md says how many there are', () => {
    const file = repoFile('README.md');
    if (!file) {
      return;
    }
    assert.match(fs.readFileSync(file, 'utf8'), new RegExp(`\\b${NUMBERS[TOOL_NAMES.length]}\\s+language-model tools`));
  });
});
