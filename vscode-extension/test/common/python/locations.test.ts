import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  envValue,
  expandHome,
  installedInterpreters,
  interpreterAt,
  interpreterInFolder,
  versionedCommands,
} from '../../../src/common/python/locations';
import { fakeSystem } from '../../../test-support/fakeSystem';

describe('the interpreter inside a folder', () => {
  it("takes a Windows venv's Scripts\\python.exe, not bin/python", () => {
    const host = fakeSystem('win32', ['C:\\work\\app\\.venv\\Scripts\\python.exe', 'C:\\work\\app\\.venv\\pyvenv.cfg']);
    assert.equal(interpreterInFolder('C:\\work\\app\\.venv', host), 'C:\\work\\app\\.venv\\Scripts\\python.exe');
    assert.equal(interpreterAt('C:\\work\\app\\.venv', host), 'C:\\work\\app\\.venv\\Scripts\\python.exe');
  });
  it('takes python.exe at the top of a Windows install or conda folder', () => {
    const host = fakeSystem('win32', ['C:\\Miniconda3\\python.exe', 'C:\\Miniconda3\\Scripts\\conda.exe']);
    assert.equal(interpreterAt('C:\\Miniconda3', host), 'C:\\Miniconda3\\python.exe');
  });
  it("takes a macOS or Linux venv's bin/python3, else bin/python", () => {
    const mac = fakeSystem('darwin', ['/Users/ana/app/.venv/bin/python3', '/Users/ana/app/.venv/bin/python']);
    assert.equal(interpreterAt('/Users/ana/app/.venv', mac), '/Users/ana/app/.venv/bin/python3');
    const linux = fakeSystem('linux', ['/opt/env/bin/python']);
    assert.equal(interpreterAt('/opt/env', linux), '/opt/env/bin/python');
    // a venv on Windows has no bin/: a folder with only bin/python holds no interpreter there
    assert.equal(interpreterInFolder('C:\\env', fakeSystem('win32', ['C:\\env\\bin\\python'])), undefined);
  });
  it('leaves a file as it is, and a folder without an interpreter too (the probe then says why)', () => {
    const host = fakeSystem('linux', ['/usr/bin/python3.12', '/srv/empty/readme']);
    assert.equal(interpreterAt('/usr/bin/python3.12', host), '/usr/bin/python3.12');
    assert.equal(interpreterAt('/srv/empty', host), '/srv/empty');
  });
  it('expands ~ to the home folder', () => {
    const mac = fakeSystem('darwin', ['/Users/ana/.venvs/tools/bin/python3']);
    assert.equal(interpreterAt('~/.venvs/tools', mac), '/Users/ana/.venvs/tools/bin/python3');
    assert.equal(expandHome('~\\py\\python.exe', fakeSystem('win32', [])), 'C:\\Users\\ana\\py\\python.exe');
    assert.equal(expandHome('~\\x', fakeSystem('linux', [])), '~\\x');
    assert.equal(expandHome('~', fakeSystem('linux', [])), '/home/ana');
  });
});

describe('usual install locations', () => {
  it('macOS: Homebrew on Apple silicon and Intel, python.org frameworks newest first, pyenv', () => {
    const host = fakeSystem('darwin', [
      '/opt/homebrew/bin/python3',
      '/usr/local/bin/python3',
      '/Library/Frameworks/Python.framework/Versions/3.10/bin/python3',
      '/Library/Frameworks/Python.framework/Versions/3.11/bin/python3',
      '/Library/Frameworks/Python.framework/Versions/3.13/bin/python3',
      '/Library/Frameworks/Python.framework/Versions/Current/bin/python3',
      '/Users/ana/.pyenv/shims/python3',
    ]);
    assert.deepEqual(installedInterpreters(host), [
      '/opt/homebrew/bin/python3',
      '/usr/local/bin/python3',
      '/Library/Frameworks/Python.framework/Versions/3.13/bin/python3',
      '/Library/Frameworks/Python.framework/Versions/3.11/bin/python3',
      '/Users/ana/.pyenv/shims/python3',
    ]);
  });
  it('macOS: only what exists, and PYENV_ROOT when set', () => {
    const host = fakeSystem('darwin', ['/usr/local/bin/python3', '/opt/pyenv/shims/python3'], { env: { PYENV_ROOT: '/opt/pyenv' } });
    assert.deepEqual(installedInterpreters(host), ['/usr/local/bin/python3', '/opt/pyenv/shims/python3']);
    assert.deepEqual(installedInterpreters(fakeSystem('darwin', [])), []);
  });
  it('Windows: per-user and all-users python.org installs, newest first, then pyenv-win versions', () => {
    const host = fakeSystem(
      'win32',
      [
        'C:\\Users\\ana\\AppData\\Local\\Programs\\Python\\Python311\\python.exe',
        'C:\\Users\\ana\\AppData\\Local\\Programs\\Python\\Python313\\python.exe',
        'C:\\Users\\ana\\AppData\\Local\\Programs\\Python\\Python39\\python.exe',
        'C:\\Users\\ana\\AppData\\Local\\Programs\\Python\\Launcher\\py.exe',
        'D:\\Apps\\Python312\\python.exe',
        'C:\\Users\\ana\\.pyenv\\pyenv-win\\versions\\3.12.4\\python.exe',
        'C:\\Users\\ana\\.pyenv\\pyenv-win\\shims\\python.bat',
      ],
      // variable names as Windows may spell them
      { env: { LocalAppData: 'C:\\Users\\ana\\AppData\\Local', PROGRAMFILES: 'D:\\Apps' } },
    );
    assert.deepEqual(installedInterpreters(host), [
      'C:\\Users\\ana\\AppData\\Local\\Programs\\Python\\Python313\\python.exe',
      'C:\\Users\\ana\\AppData\\Local\\Programs\\Python\\Python311\\python.exe',
      'D:\\Apps\\Python312\\python.exe',
      'C:\\Users\\ana\\.pyenv\\pyenv-win\\versions\\3.12.4\\python.exe',
    ]);
  });
  it('Windows: the usual folders without the variables', () => {
    const host = fakeSystem('win32', ['C:\\Program Files\\Python314\\python.exe', 'C:\\Users\\ana\\AppData\\Local\\Programs\\Python\\Python312\\python.exe']);
    assert.deepEqual(installedInterpreters(host), [
      'C:\\Users\\ana\\AppData\\Local\\Programs\\Python\\Python312\\python.exe',
      'C:\\Program Files\\Python314\\python.exe',
    ]);
  });
  it('Linux: Homebrew on Linux and pyenv', () => {
    const host = fakeSystem('linux', ['/home/linuxbrew/.linuxbrew/bin/python3', '/home/ana/.pyenv/shims/python3', '/usr/bin/python3']);
    assert.deepEqual(installedInterpreters(host), ['/home/linuxbrew/.linuxbrew/bin/python3', '/home/ana/.pyenv/shims/python3']);
  });
  it('versioned names: the py launcher on Windows, python3.X elsewhere, newest first', () => {
    assert.deepEqual(
      versionedCommands('win32').map((c) => [c.command, ...c.args].join(' ')),
      ['py -3.14', 'py -3.13', 'py -3.12', 'py -3.11'],
    );
    assert.deepEqual(
      versionedCommands('darwin').map((c) => c.command),
      ['python3.14', 'python3.13', 'python3.12', 'python3.11'],
    );
  });
  it('reads variables without case on Windows only', () => {
    assert.equal(envValue({ LocalAppData: 'X' }, 'LOCALAPPDATA', 'win32'), 'X');
    assert.equal(envValue({ LocalAppData: 'X' }, 'LOCALAPPDATA', 'linux'), undefined);
  });
});
