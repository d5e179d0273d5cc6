import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import { SERVER_SETTINGS } from '../src/settings';
import { COMMANDS, schemaFields, toolInputToCommand, TOOL_NAMES, TOOLS } from '../src/tools';

// Compiled tests live in out-test/test/; package.json is two levels up.
const pkgPath = [path.join(__dirname, '..', '..', 'package.json'), path.join(__dirname, '..', 'package.json')].find((p) => fs.existsSync(p));
const pkg = JSON.parse(fs.readFileSync(pkgPath ?? 'package.json', 'utf8')) as {
  activationEvents: string[];
  contributes: {
    languageModelTools: Array<{
      name: string;
      displayName: string;
      modelDescription: string;
      inputSchema: { type: string; properties: Record<string, { type: string }>; required: string[] };
    }>;
    configuration: { properties: Record<string, { type: string; default: unknown; enum?: string[]; items?: { type: string } }> };
    commands: Array<{ command: string }>;
  };
};

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
    const r = toolInputToCommand('steadyhand_read_file', { file_path: '/a', offset: 0, limit: 2.5 }, 'default');
    assert.equal(r.ok, false);
    assert.match(!r.ok ? r.error : '', /offset must be an integer >= 1.*limit must be an integer >= 1/);
    const r2 = toolInputToCommand('steadyhand_edit_file', { file_path: '/a', old_string: 1, new_string: 'y', replace_all: 'yes' }, 'd');
    assert.match(!r2.ok ? r2.error : '', /old_string must be a string.*replace_all must be a boolean/);
  });
  it('refuses non-object input and unknown tools', () => {
    assert.equal(toolInputToCommand('steadyhand_read_file', 'a.py', 'd').ok, false);
    assert.equal(toolInputToCommand('steadyhand_read_file', null, 'd').ok, false);
    assert.equal(toolInputToCommand('nope', {}, 'd').ok, false);
  });
  it('drops explicit nulls of optional fields', () => {
    const r = toolInputToCommand('steadyhand_read_file', { file_path: '/a', offset: null }, 'd');
    assert.deepEqual(r.ok && r.params, { file_path: '/a', session: 'd' });
  });
});

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
      const fields = schemaFields(spec);
      assert.deepEqual(
        Object.fromEntries(Object.entries(t.inputSchema.properties).map(([k, v]) => [k, v.type])),
        fields.properties,
      );
      assert.deepEqual([...t.inputSchema.required].sort(), [...fields.required].sort());
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
  it('never contributes a command id the server registers', () => {
    for (const c of pkg.contributes.commands) {
      assert.ok(!Object.values(COMMANDS).includes(c.command as never), c.command);
      assert.match(c.command, /^steadyhand\.client\./);
    }
  });
});

describe('package.json ↔ server settings', () => {
  const props = pkg.contributes.configuration.properties;
  for (const spec of SERVER_SETTINGS) {
    it(`steadyhand.${spec.name} is declared with the server's type and default`, () => {
      const p = props[`steadyhand.${spec.name}`];
      assert.ok(p, `steadyhand.${spec.name} missing`);
      const type = spec.type === 'string[]' ? 'array' : spec.type;
      assert.equal(p.type, type);
      assert.deepEqual(p.default, spec.default);
      if (spec.values) {
        assert.deepEqual(p.enum, [...spec.values]);
      }
    });
  }
  it('declares no other top-level server settings', () => {
    const names = Object.keys(props)
      .filter((k) => !k.startsWith('steadyhand.server.') && !k.startsWith('steadyhand.tools.'))
      .map((k) => k.slice('steadyhand.'.length));
    assert.deepEqual(names.sort(), SERVER_SETTINGS.map((s) => s.name).sort());
  });
});
