import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  interpreterCandidates,
  parseProbeOutput,
  probeFailure,
  resolveInterpreter,
  versionOk,
  type Candidate,
  type ProbeResult,
} from '../../../src/common/python/interpreter';
import { fakeSystem } from '../../../test-support/fakeSystem';

function fakeProbe(table: Record<string, ProbeResult>): (c: Candidate) => Promise<ProbeResult> {
  return (c) => Promise.resolve(table[c.command] ?? { ok: false, reason: 'not found' });
}

const ok = (major: number, minor: number, exe = `/usr/bin/python${major}.${minor}`): ProbeResult => ({
  ok: true,
  info: { version: [major, minor, 0], executable: exe },
});

describe('interpreterCandidates', () => {
  it('uses only the setting when it is set', () => {
    const c = interpreterCandidates(' /opt/py/bin/python ', '/ext/python', 'linux');
    assert.deepEqual(c, [{ command: '/opt/py/bin/python', args: [], source: 'setting' }]);
  });
  it('prefers the Python extension, then python3 on PATH', () => {
    const c = interpreterCandidates('', '/venv/bin/python', 'linux');
    assert.deepEqual(
      c.map((x) => [x.command, x.source]),
      [
        ['/venv/bin/python', 'python-extension'],
        ['python3', 'path'],
      ],
    );
  });
  it('falls back to python3 alone without the Python extension', () => {
    assert.deepEqual(interpreterCandidates(undefined, undefined, 'darwin'), [{ command: 'python3', args: [], source: 'path' }]);
  });
  it('uses python and the py launcher on Windows', () => {
    const c = interpreterCandidates('', undefined, 'win32');
    assert.deepEqual(
      c.map((x) => [x.command, ...x.args]),
      [['python'], ['py', '-3']],
    );
  });
});

describe('versionOk', () => {
  it('accepts 3.11 and newer only', () => {
    assert.equal(versionOk([3, 11, 0]), true);
    assert.equal(versionOk([3, 14, 2]), true);
    assert.equal(versionOk([4, 0, 0]), true);
    assert.equal(versionOk([3, 10, 12]), false);
    assert.equal(versionOk([2, 7, 18]), false);
  });
});

describe('parseProbeOutput', () => {
  it('reads the JSON line', () => {
    assert.deepEqual(parseProbeOutput('{"version": [3, 12, 1], "executable": "/usr/bin/python3.12"}\n'), {
      ok: true,
      info: { version: [3, 12, 1], executable: '/usr/bin/python3.12' },
    });
  });
  it('takes the last line when the interpreter prints a banner first', () => {
    const r = parseProbeOutput('pyenv: hello\n{"version": [3, 11, 7], "executable": "/x"}');
    assert.equal(r.ok, true);
  });
  it('rejects garbage', () => {
    const r = parseProbeOutput('Python was not found; run without arguments to install from the Microsoft Store');
    assert.equal(r.ok, false);
  });
});

describe('resolveInterpreter', () => {
  it('returns the first usable interpreter and records skipped ones', async () => {
    const cands = interpreterCandidates('', '/venv/bin/python', 'linux');
    const r = await resolveInterpreter(cands, fakeProbe({ '/venv/bin/python': ok(3, 9), python3: ok(3, 12, '/usr/bin/python3.12') }));
    assert.equal(r.ok, true);
    if (r.ok) {
      assert.equal(r.command, 'python3');
      assert.equal(r.executable, '/usr/bin/python3.12');
      assert.equal(r.source, 'path');
      assert.equal(r.skipped.length, 1);
      assert.match(r.skipped[0] ?? '', /Python 3\.9\.0 is too old/);
    }
  });
  it('uses the Python extension interpreter when it is new enough', async () => {
    const cands = interpreterCandidates('', '/venv/bin/python', 'linux');
    const r = await resolveInterpreter(cands, fakeProbe({ '/venv/bin/python': ok(3, 13), python3: ok(3, 12) }));
    assert.equal(r.ok && r.source, 'python-extension');
  });
  it('names the setting when the configured interpreter is unusable (no silent fallback)', async () => {
    const cands = interpreterCandidates('/nope/python', '/venv/bin/python', 'linux');
    const r = await resolveInterpreter(cands, fakeProbe({ python3: ok(3, 12) }));
    assert.equal(r.ok, false);
    if (!r.ok) {
      assert.match(r.message, /steadyhand\.server\.python/);
      assert.match(r.message, /\/nope\/python/);
      assert.equal(r.details.length, 1);
    }
  });
  it('explains what was tried when nothing is found', async () => {
    const r = await resolveInterpreter(interpreterCandidates('', undefined, 'linux'), fakeProbe({ python3: ok(3, 8) }));
    assert.equal(r.ok, false);
    if (!r.ok) {
      assert.match(r.message, /no Python 3\.11 or newer/);
      assert.match(r.message, /python3/);
      assert.match(r.details[0] ?? '', /Python 3\.8\.0 is too old/);
    }
  });
});

describe('interpreterCandidates on each system', () => {
  const cmds = (c: Candidate[]): string[] => c.map((x) => [x.command, ...x.args].join(' '));
  it('Windows: PATH, the py launcher by version, then the installs found', () => {
    const host = fakeSystem('win32', ['C:\\Users\\ana\\AppData\\Local\\Programs\\Python\\Python312\\python.exe']);
    assert.deepEqual(cmds(interpreterCandidates('', undefined, 'win32', host)), [
      'python',
      'py -3',
      'py -3.14',
      'py -3.13',
      'py -3.12',
      'py -3.11',
      'C:\\Users\\ana\\AppData\\Local\\Programs\\Python\\Python312\\python.exe',
    ]);
    assert.equal(interpreterCandidates('', undefined, 'win32', host).at(-1)?.source, 'location');
  });
  it("Windows: a venv folder in the setting or from the Python extension means its Scripts\\python.exe", () => {
    const host = fakeSystem('win32', ['C:\\w\\.venv\\Scripts\\python.exe']);
    assert.deepEqual(interpreterCandidates('C:\\w\\.venv', undefined, 'win32', host), [
      { command: 'C:\\w\\.venv\\Scripts\\python.exe', args: [], source: 'setting' },
    ]);
    assert.deepEqual(interpreterCandidates('', 'C:\\w\\.venv', 'win32', host)[0], {
      command: 'C:\\w\\.venv\\Scripts\\python.exe',
      args: [],
      source: 'python-extension',
    });
  });
  it('macOS: python3 on PATH, the versioned names, then Homebrew, python.org and pyenv', () => {
    const host = fakeSystem('darwin', [
      '/opt/homebrew/bin/python3',
      '/Library/Frameworks/Python.framework/Versions/3.12/bin/python3',
      '/Users/ana/.pyenv/shims/python3',
    ]);
    assert.deepEqual(cmds(interpreterCandidates(undefined, undefined, 'darwin', host)), [
      'python3',
      'python3.14',
      'python3.13',
      'python3.12',
      'python3.11',
      '/opt/homebrew/bin/python3',
      '/Library/Frameworks/Python.framework/Versions/3.12/bin/python3',
      '/Users/ana/.pyenv/shims/python3',
    ]);
  });
  it('does not try an install location twice', () => {
    const host = fakeSystem('darwin', ['/opt/homebrew/bin/python3']);
    const c = interpreterCandidates('', '/opt/homebrew/bin/python3', 'darwin', host);
    assert.equal(c.filter((x) => x.command === '/opt/homebrew/bin/python3').length, 1);
  });
  it('an explicit setting is still the only candidate', () => {
    const host = fakeSystem('darwin', ['/opt/homebrew/bin/python3']);
    assert.deepEqual(cmds(interpreterCandidates('/nope/python', undefined, 'darwin', host)), ['/nope/python']);
  });
  it('macOS: a too old python3 on PATH (the Xcode one) gives way to Homebrew', async () => {
    const host = fakeSystem('darwin', ['/opt/homebrew/bin/python3']);
    const r = await resolveInterpreter(
      interpreterCandidates('', undefined, 'darwin', host),
      fakeProbe({ python3: ok(3, 9, '/Library/Developer/CommandLineTools/usr/bin/python3'), '/opt/homebrew/bin/python3': ok(3, 13) }),
    );
    assert.equal(r.ok && r.command, '/opt/homebrew/bin/python3');
    assert.equal(r.ok && r.source, 'location');
    assert.match(r.ok ? (r.skipped[0] ?? '') : '', /Python 3\.9\.0 is too old/);
  });
  it('Windows: the Store stub on PATH and an old py -3 give way to py -3.12', async () => {
    const cands = interpreterCandidates('', undefined, 'win32', fakeSystem('win32', []));
    const probe = (c: Candidate): Promise<ProbeResult> => {
      const key = [c.command, ...c.args].join(' ');
      const table: Record<string, ProbeResult> = {
        python: { ok: false, reason: 'failed: Python was not found; run without arguments to install from the Microsoft Store' },
        'py -3': ok(3, 10, 'C:\\Python310\\python.exe'),
        'py -3.12': ok(3, 12, 'C:\\Python312\\python.exe'),
      };
      return Promise.resolve(table[key] ?? { ok: false, reason: 'failed: No suitable Python runtime found' });
    };
    const r = await resolveInterpreter(cands, probe);
    assert.equal(r.ok, true);
    assert.deepEqual(r.ok && [r.command, ...r.args], ['py', '-3.12']);
    assert.equal(r.ok && r.executable, 'C:\\Python312\\python.exe');
    assert.equal(r.ok && r.skipped.length, 4);
  });
});

describe('probeFailure', () => {
  it('says what went wrong in a few words', () => {
    assert.equal(probeFailure('python3', 'ENOENT', '', 'linux'), 'not found');
    assert.equal(probeFailure('py', undefined, 'x\nNo suitable Python runtime found\n', 'win32'), 'failed: No suitable Python runtime found');
  });
  it('tells a batch file (pyenv-win shim) from an interpreter on Windows', () => {
    assert.match(probeFailure('C:\\Users\\ana\\.pyenv\\pyenv-win\\shims\\python.bat', 'EINVAL', 'spawn EINVAL', 'win32'), /batch file .* python\.exe/);
  });
});
