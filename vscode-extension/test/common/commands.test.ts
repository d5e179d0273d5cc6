import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import * as fs from 'node:fs';
import { commandArguments, SERVER_COMMANDS } from '../../src/common/commands';
import { serverSource } from '../../test-support/files';

describe('server commands', () => {
  it('lists every command the server advertises', () => {
    // The server's list, when this checkout has the server next to the extension.
    const source = serverSource('protocol', 'commands.py');
    if (!source) {
      return;
    }
    const text = fs.readFileSync(source, 'utf8');
    const names = new Map([...text.matchAll(/^([A-Z_]+): Final = "(steadyhand\.[\w.]+)"$/gm)].map((m) => [m[1], m[2]]));
    const all = /ALL_COMMANDS[^=]*=\s*\(([^)]*)\)/.exec(text)?.[1] ?? '';
    const advertised = [...all.matchAll(/[A-Z_]+/g)].map((m) => names.get(m[0]));
    assert.ok(advertised.length > 0);
    assert.deepEqual([...SERVER_COMMANDS].sort(), [...advertised].sort());
  });
  it('passes a call\'s arguments through, without trailing undefined ones', () => {
    assert.deepEqual(commandArguments([]), []);
    assert.deepEqual(commandArguments([{ file_path: '/a' }]), [{ file_path: '/a' }]);
    assert.deepEqual(commandArguments([{ file_path: '/a' }, undefined]), [{ file_path: '/a' }]);
    assert.deepEqual(commandArguments([undefined]), []);
    assert.deepEqual(commandArguments([{ a: 1 }, { b: 2 }]), [{ a: 1 }, { b: 2 }]);
  });
});
