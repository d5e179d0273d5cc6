import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { bundlePlatformNote, envKey, ensureServerEnv, pipEnv, pythonEnv, type BundleManifest } from '../../../src/common/python/environment';

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

describe('the private environment on Windows', () => {
  it('drops inherited Python variables whatever their case (Windows names have none)', () => {
    const env = pythonEnv('C:\\s\\site', { Path: 'C:\\Windows', PythonHome: 'C:\\Python27', PythonPath: 'C:\\evil' }, 'win32');
    assert.deepEqual(
      Object.keys(env).filter((k) => k.toUpperCase().startsWith('PYTHON')).sort(),
      ['PYTHONNOUSERSITE', 'PYTHONPATH', 'PYTHONUNBUFFERED', 'PYTHONUTF8'],
    );
    assert.equal(env.PYTHONPATH, 'C:\\s\\site');
    assert.equal(env.Path, 'C:\\Windows');
  });
  it("drops the machine's pip settings whatever their case", () => {
    const env = pipEnv({ Pip_Index_Url: 'http://mirror', pip_find_links: 'C:\\wheels', PATH: 'x' }, 'win32');
    assert.deepEqual(Object.keys(env).filter((k) => k.toUpperCase().startsWith('PIP_')), ['PIP_CONFIG_FILE']);
  });
  it('keeps names of another case elsewhere, where they are other variables', () => {
    const env = pythonEnv(undefined, { PythonPath: '/x' }, 'linux');
    assert.equal(env.PythonPath, '/x');
  });
});

describe('bundlePlatformNote', () => {
  const manifest: BundleManifest = { serverVersion: '0.1.0', requirement: 'steadyhand==0.1.0', pipWheel: 'pip.whl', wheels: [] };
  it('says nothing when the bundle fits this machine, or does not say what it is for', () => {
    assert.equal(bundlePlatformNote({ ...manifest, targets: ['win32-x64'] }, 'win32', 'x64'), undefined);
    assert.equal(bundlePlatformNote({ ...manifest, targets: ['linux-x64', 'win32-x64'] }, 'linux', 'x64'), undefined);
    assert.equal(bundlePlatformNote(manifest, 'darwin', 'arm64'), undefined);
  });
  it('names the right VSIX when the bundle is for another platform', () => {
    assert.match(
      bundlePlatformNote({ ...manifest, targets: ['linux-x64'] }, 'darwin', 'arm64') ?? '',
      /built for linux-x64, not darwin-arm64: .*package index\. Install the VSIX built for darwin-arm64\./,
    );
  });
});
