import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import * as fs from 'node:fs';
import { readServerSettings, SERVER_SETTINGS } from '../../src/common/settings';
import { packageJson, serverSource } from '../../test-support/files';

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

describe('readServerSettings', () => {
  it('fills defaults for unset keys', () => {
    const { settings, problems } = readServerSettings(() => undefined);
    assert.deepEqual(problems, []);
    assert.deepEqual(settings, Object.fromEntries(SERVER_SETTINGS.map((s) => [s.name, s.default])));
    assert.equal(settings.saveAfterEdit, 'whenClean');
    assert.equal(settings.maxReadBytes, 262144);
  });
  it('passes valid values and replaces invalid ones with the default', () => {
    const values: Record<string, unknown> = { saveAfterEdit: 'sometimes', maxReadTokens: 100, denyGlobs: ['**/.env', 3], watch: false };
    const { settings, problems } = readServerSettings((n) => values[n]);
    assert.equal(settings.saveAfterEdit, 'whenClean');
    assert.equal(settings.maxReadTokens, 100);
    assert.deepEqual(settings.denyGlobs, []);
    assert.equal(settings.watch, false);
    assert.equal(problems.length, 2);
    assert.match(problems.join('\n'), /steadyhand\.saveAfterEdit.*one of whenClean, always, never/);
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
  it('reads the settings that decide what agents may touch from user (or remote) settings only', () => {
    // Window- or machine-overridable scope would let a workspace or .code-workspace file, which an
    // agent can edit, widen the agent's own access.
    const expected: Record<string, string> = {
      'steadyhand.server.python': 'machine',
      'steadyhand.allowedPaths': 'machine',
      'steadyhand.historyDir': 'machine',
      'steadyhand.denyGlobs': 'application',
      'steadyhand.protectedGlobs': 'application',
      'steadyhand.allowProtectedWrites': 'application',
      'steadyhand.secrets': 'application',
      'steadyhand.syntaxCheck': 'application',
      'steadyhand.allowHardLinks': 'application',
      'steadyhand.confirmEdits': 'application',
      'steadyhand.saveAfterEdit': 'application',
      'steadyhand.tools.confirmWrites': 'application',
    };
    for (const [name, scope] of Object.entries(expected)) {
      assert.equal(props[name]?.scope, scope, name);
    }
  });
  it('covers every setting the server has, with its defaults', () => {
    // The server's Settings class, when this checkout has the server next to the extension.
    const source = serverSource('config.py');
    if (!source) {
      return;
    }
    const text = fs.readFileSync(source, 'utf8');
    const body = /^class Settings:\n((?:(?:    .*)?\n)*)/m.exec(text)?.[1] ?? '';
    const fields = [...body.matchAll(/^    ([a-z_]+): [^=\n]+= (.+)$/gm)].map((m) => ({
      name: (m[1] ?? '').replace(/_([a-z])/g, (_, c: string) => c.toUpperCase()),
      raw: (m[2] ?? '').trim(),
    }));
    assert.ok(fields.length > 0, 'no fields found in the server settings');
    assert.deepEqual(fields.map((f) => f.name).sort(), SERVER_SETTINGS.map((s) => s.name).sort());
    for (const f of fields) {
      const spec = SERVER_SETTINGS.find((s) => s.name === f.name);
      let value: unknown;
      if (/^[\d_]+(?: \* [\d_]+)*$/.test(f.raw)) {
        value = f.raw.split(' * ').reduce((n, part) => n * Number(part.replace(/_/g, '')), 1);
      } else if (f.raw === 'True' || f.raw === 'False') {
        value = f.raw === 'True';
      } else if (/^"[^"]*"$/.test(f.raw)) {
        value = f.raw.slice(1, -1);
      } else {
        continue; // tuples and named constants: compared by the package.json test above
      }
      assert.deepEqual(spec?.default, value, f.name);
    }
  });
  it('declares no other top-level server settings', () => {
    // The extension's own: steadyhand.server.*, steadyhand.tools.*, steadyhand.changes.*
    const own = ['steadyhand.server.', 'steadyhand.tools.', 'steadyhand.changes.'];
    const names = Object.keys(props)
      .filter((k) => !own.some((prefix) => k.startsWith(prefix)))
      .map((k) => k.slice('steadyhand.'.length));
    assert.deepEqual(names.sort(), SERVER_SETTINGS.map((s) => s.name).sort());
  });
});
