import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import { changedNotebook, unsavedNotebookResult } from '../src/notebooks';
import { isNotebookPath, resolveToolPath } from '../src/paths';
import { envKey, ensureServerEnv, pipEnv, pythonEnv, type BundleManifest } from '../src/pythonEnv';
import { ServerLogParser } from '../src/serverLog';
import { readServerSettings, SERVER_SETTINGS } from '../src/settings';
import { decodeDisk, diskMatches } from '../src/textCompare';
import { errorText, withTimeout } from '../src/timeout';

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

describe('textCompare', () => {
  it('decodes UTF-8 with and without BOM and UTF-16 with BOM', () => {
    assert.equal(decodeDisk(Buffer.from('héllo')), 'héllo');
    assert.equal(decodeDisk(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('a')])), 'a');
    assert.equal(decodeDisk(Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('hi', 'utf16le')])), 'hi');
    const be = Buffer.from('hi', 'utf16le').swap16();
    assert.equal(decodeDisk(Buffer.concat([Buffer.from([0xfe, 0xff]), be])), 'hi');
  });
  it('compares line endings exactly', () => {
    assert.equal(diskMatches(Buffer.from('a\r\nb'), 'a\r\nb'), true);
    assert.equal(diskMatches(Buffer.from('a\nb'), 'a\r\nb'), false);
  });
});

describe('pythonEnv', () => {
  const manifest: BundleManifest = { serverVersion: '0.1.0', requirement: 'steadyhand==0.1.0', pipWheel: 'pip.whl', wheels: ['a.whl', 'b.whl'] };
  const py = { command: 'python3', args: [], executable: '/usr/bin/python3.11', version: [3, 11, 7] };
  it('keys environments by bundle and interpreter', () => {
    const k = envKey(manifest, py, 'linux', 'x64');
    assert.match(k, /^0\.1\.0-py311-[0-9a-f]{12}$/);
    assert.equal(envKey({ ...manifest, wheels: ['b.whl', 'a.whl'] }, py, 'linux', 'x64'), k);
    assert.notEqual(envKey(manifest, { ...py, executable: '/venv/bin/python' }, 'linux', 'x64'), k);
    assert.notEqual(envKey({ ...manifest, serverVersion: '0.2.0' }, py, 'linux', 'x64'), k);
  });
  it('sets a clean Python environment', () => {
    const env = pythonEnv('/s/site', { PATH: '/bin', PYTHONPATH: '/evil', PYTHONHOME: '/h' });
    assert.equal(env.PYTHONPATH, '/s/site');
    assert.equal(env.PYTHONHOME, undefined);
    assert.equal(env.PYTHONNOUSERSITE, '1');
    assert.equal(pythonEnv(undefined, { PYTHONPATH: '/evil' }).PYTHONPATH, undefined);
  });
  it('runs pip without the machine pip configuration', () => {
    const env = pipEnv({ PATH: '/bin', PIP_INDEX_URL: 'http://mirror', PIP_FIND_LINKS: '/opt/wheels' });
    assert.equal(env.PIP_INDEX_URL, undefined);
    assert.equal(env.PIP_FIND_LINKS, undefined);
    assert.equal(env.PIP_CONFIG_FILE, os.devNull);
    assert.equal(env.PATH, '/bin');
  });
  it('without a bundle, refuses clearly when the interpreter lacks steadyhand', async () => {
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'sh-env-'));
    // -S: no site-packages at all, so the project's own virtualenv, when active, does not
    // lend the interpreter its steadyhand
    const python = { command: process.env.PYTHON_FOR_TESTS ?? 'python3', args: ['-I', '-S'], executable: 'python3', version: [3, 11, 0] };
    await assert.rejects(
      ensureServerEnv({ bundledDir: path.join(tmp, 'none'), storageDir: tmp, python, log: () => undefined, allowOnline: false }),
      /carries no bundled server/,
    );
  });
});

describe('ServerLogParser', () => {
  it('routes Python logging records by level and strips the timestamp', () => {
    const p = new ServerLogParser();
    assert.deepEqual(p.line('2026-11-30 03:05:15,658 INFO steadyhand: steadyhand 0.1.0 ready (pid 1)'), {
      level: 'info',
      text: 'steadyhand: steadyhand 0.1.0 ready (pid 1)',
    });
    assert.equal(p.line('2026-11-30 03:05:15,658 WARNING steadyhand.watcher: inotify limit').level, 'warn');
    assert.equal(p.line('  continuation of the warning').level, 'warn');
    assert.equal(p.line('Traceback (most recent call last):').level, 'error');
    assert.equal(p.line('  File "x.py", line 1').level, 'error');
    assert.equal(p.line('2026-11-30 03:05:15,658 DEBUG pygls: x').level, 'debug');
  });
});

describe('withTimeout', () => {
  it('answers the value in time, undefined after the limit', async () => {
    assert.equal(await withTimeout(Promise.resolve(7), 1000), 7);
    assert.equal(await withTimeout(new Promise(() => undefined), 20), undefined);
    assert.equal(errorText(new Error('boom')), 'boom');
    assert.equal(errorText('plain'), 'plain');
  });
});
