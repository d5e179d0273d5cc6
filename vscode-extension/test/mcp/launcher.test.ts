import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import { hostSnippets, launcherScript } from '../../src/mcp/launcher';
import { McpLauncher } from '../../src/mcp/launcherFile';

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

describe('McpLauncher', () => {
  it('writes the launcher into <storage>/bin, executable, and rewrites it at the next start', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sh-launcher-file-'));
    const warnings: string[] = [];
    const launcher = new McpLauncher(dir, (l) => warnings.push(l), 'linux');
    assert.equal(launcher.path, undefined);
    const file = launcher.write('/usr/bin/python3', [], path.join(dir, 'site-a'));
    assert.equal(file, path.join(dir, 'bin', 'steadyhand'));
    assert.equal(launcher.path, file);
    assert.equal(fs.statSync(file).mode & 0o111, 0o111);
    assert.match(fs.readFileSync(file, 'utf8'), /site-a/);
    launcher.write('/usr/bin/python3', [], path.join(dir, 'site-b'));
    assert.match(fs.readFileSync(file, 'utf8'), /site-b/);
    assert.deepEqual(fs.readdirSync(path.join(dir, 'bin')), ['steadyhand']);
    assert.deepEqual(warnings, []);
    fs.rmSync(dir, { recursive: true, force: true });
  });
  it('names a .cmd launcher on Windows', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sh-launcher-file-'));
    const file = new McpLauncher(dir, () => undefined, 'win32').write('C:\\Python\\python.exe', [], 'C:\\s');
    assert.equal(file, path.join(dir, 'bin', 'steadyhand.cmd'));
    fs.rmSync(dir, { recursive: true, force: true });
  });
  it('says why when it cannot write, and offers no launcher', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sh-launcher-file-'));
    fs.writeFileSync(path.join(dir, 'bin'), 'a file where the folder should be');
    const warnings: string[] = [];
    const launcher = new McpLauncher(dir, (l) => warnings.push(l), 'linux');
    assert.equal(launcher.write('/usr/bin/python3', [], undefined), undefined);
    assert.equal(launcher.path, undefined);
    assert.match(warnings[0] ?? '', /^Could not write the MCP launcher .*bin.steadyhand: /);
    fs.rmSync(dir, { recursive: true, force: true });
  });
});

describe('the Windows launcher', () => {
  it('clears an inherited PYTHONHOME, as the POSIX one does', () => {
    assert.match(launcherScript('C:\\Python\\python.exe', [], 'C:\\s', 'win32').content, /^set PYTHONHOME=\r$/m);
    assert.match(launcherScript('/usr/bin/python3', [], '/s', 'linux').content, /^unset PYTHONHOME$/m);
  });
  it('runs the py launcher with its version argument', () => {
    assert.match(launcherScript('py', ['-3.12'], 'C:\\s', 'win32').content, /^"py" "-3\.12" -m steadyhand %\*\r$/m);
  });
});
