import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import { hostSnippets, launcherScript } from '../src/mcp';

describe('launcherScript', () => {
  it('runs the interpreter with the private environment and passes every argument on', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sh-launcher-'));
    const site = path.join(dir, "site with 'quote'");
    const l = launcherScript('/bin/sh', ['-c', 'echo "$PYTHONPATH|$PYTHONNOUSERSITE|$*"', 'x'], site, 'linux');
    const file = path.join(dir, l.name);
    fs.writeFileSync(file, l.content, { mode: 0o755 });
    // `-m steadyhand` then the arguments reach the "interpreter" (here a shell printing them)
    const out = execFileSync(file, ['mcp', 'a b'], { encoding: 'utf8' }).trim();
    assert.equal(out, `${site}|1|-m steadyhand mcp a b`);
    fs.rmSync(dir, { recursive: true, force: true });
  });
  it('leaves PYTHONPATH alone without a private environment', () => {
    assert.doesNotMatch(launcherScript('/usr/bin/python3', [], undefined, 'linux').content, /PYTHONPATH/);
  });
  it('writes a .cmd file on Windows', () => {
    const l = launcherScript('C:\\Python\\python.exe', [], 'C:\\s', 'win32');
    assert.equal(l.name, 'steadyhand.cmd');
    assert.match(l.content, /set "PYTHONPATH=C:\\s"\r\n/);
    assert.match(l.content, /"C:\\Python\\python.exe" -m steadyhand %\*/);
  });
});

describe('hostSnippets', () => {
  it('gives every host the launcher with `mcp`', () => {
    const snippets = hostSnippets('/home/u/Steady Hand/bin/steadyhand', 'linux');
    const ids = snippets.map((s) => s.id);
    assert.deepEqual(ids, ['claude', 'codex', 'gemini', 'cursor', 'vscode', 'zed', 'mcphub', 'command']);
    const text = (id: string): string => snippets.find((s) => s.id === id)?.text ?? '';
    assert.equal(text('claude'), "claude mcp add steadyhand -- '/home/u/Steady Hand/bin/steadyhand' mcp");
    for (const s of snippets.filter((x) => x.text.startsWith('{'))) {
      const parsed = JSON.parse(s.text) as Record<string, Record<string, { command: string; args: string[] }>>;
      const entry = Object.values(parsed).map((servers) => servers.steadyhand)[0];
      assert.equal(entry?.command, '/home/u/Steady Hand/bin/steadyhand');
      assert.equal(entry?.args[0], 'mcp');
    }
    assert.match(text('codex'), /^\[mcp_servers\.steadyhand\]\ncommand = "\/home\/u\/Steady Hand\/bin\/steadyhand"\nargs = \["mcp"\]/);
  });
});
