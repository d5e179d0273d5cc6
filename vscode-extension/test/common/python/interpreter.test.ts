import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  interpreterCandidates,
  parseProbeOutput,
  resolveInterpreter,
  versionOk,
  type Candidate,
  type ProbeResult,
} from '../../../src/common/python/interpreter';

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
