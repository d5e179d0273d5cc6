/**
 * Where Python usually is on each system, for when no setting names one and the Python extension
 * has none: the interpreter of a virtual environment or install folder (`Scripts\python.exe` on
 * Windows, `bin/python3` elsewhere), and the places installers put it (Homebrew, python.org,
 * pyenv; on Windows the per-user and all-users python.org folders and the `py` launcher's
 * versions). Pure (no `vscode` import): the system is passed in, so the rules for Windows and
 * macOS are unit-tested on any machine.
 */
import * as path from 'node:path';

/** What the lookup may ask of the machine. */
export interface HostSystem {
  platform: NodeJS.Platform;
  /** The environment (names as the system spells them; Windows compares them without case). */
  env: Readonly<Record<string, string | undefined>>;
  home: string;
  isFile(p: string): boolean;
  isDirectory(p: string): boolean;
  /** The names in a folder; none when it cannot be read. */
  listDir(p: string): string[];
}

/** Python versions the server runs on, newest first (for versioned names and folders). */
export const SUPPORTED_MINORS: readonly number[] = [14, 13, 12, 11];

/** `path.win32` on Windows, `path.posix` elsewhere, whatever the machine running this. */
export function pathFor(platform: NodeJS.Platform): path.PlatformPath {
  return platform === 'win32' ? path.win32 : path.posix;
}

/** An environment variable, its name compared without case on Windows. */
export function envValue(env: Readonly<Record<string, string | undefined>>, name: string, platform: NodeJS.Platform): string | undefined {
  if (platform !== 'win32') {
    return env[name];
  }
  const key = Object.keys(env).find((k) => k.toUpperCase() === name.toUpperCase());
  return key === undefined ? undefined : env[key];
}

/** `~` and `~/…` (`~\…` on Windows) under the home folder; other paths as they are. */
export function expandHome(p: string, host: Pick<HostSystem, 'platform' | 'home'>): string {
  if (p === '~') {
    return host.home;
  }
  if (p.startsWith('~/') || (host.platform === 'win32' && p.startsWith('~\\'))) {
    return pathFor(host.platform).join(host.home, p.slice(2));
  }
  return p;
}

/**
 * The interpreter inside a folder given where an interpreter was expected: a virtual environment
 * (`Scripts\python.exe` on Windows, `bin/python3` or `bin/python` elsewhere), or a Windows install
 * or conda folder (`python.exe` at its top). Undefined when the folder holds none.
 */
export function interpreterInFolder(dir: string, host: HostSystem): string | undefined {
  const p = pathFor(host.platform);
  const inside =
    host.platform === 'win32'
      ? [p.join(dir, 'Scripts', 'python.exe'), p.join(dir, 'python.exe')]
      : [p.join(dir, 'bin', 'python3'), p.join(dir, 'bin', 'python')];
  return inside.find((f) => host.isFile(f));
}

/**
 * The interpreter a configured path names: the path itself (with `~` expanded), or the
 * interpreter inside it when it is a folder (a venv, an install folder).
 */
export function interpreterAt(configured: string, host: HostSystem): string {
  const expanded = expandHome(configured, host);
  if (host.isDirectory(expanded)) {
    return interpreterInFolder(expanded, host) ?? expanded;
  }
  return expanded;
}

/** Folder names holding a Python version (`Python312`, `3.12`) new enough, newest first. */
function versionFolders(names: readonly string[], pattern: RegExp): string[] {
  return names
    .map((name) => ({ name, minor: Number(pattern.exec(name)?.[1] ?? NaN) }))
    .filter((f) => Number.isInteger(f.minor) && f.minor >= Math.min(...SUPPORTED_MINORS))
    .sort((a, b) => b.minor - a.minor)
    .map((f) => f.name);
}

/** Interpreters that exist at the usual install locations of this system, most likely first. */
export function installedInterpreters(host: HostSystem): string[] {
  const p = pathFor(host.platform);
  const candidates: string[] = [];
  const pyenvRoot = envValue(host.env, 'PYENV_ROOT', host.platform) || p.join(host.home, '.pyenv');
  if (host.platform === 'win32') {
    // python.org's installer: per user under %LOCALAPPDATA%, for all users under %ProgramFiles%.
    const local = envValue(host.env, 'LOCALAPPDATA', host.platform) || p.join(host.home, 'AppData', 'Local');
    const programs = p.join(local, 'Programs', 'Python');
    for (const dir of versionFolders(host.listDir(programs), /^Python3(\d+)$/)) {
      candidates.push(p.join(programs, dir, 'python.exe'));
    }
    const programFiles = envValue(host.env, 'ProgramFiles', host.platform) || 'C:\\Program Files';
    for (const dir of versionFolders(host.listDir(programFiles), /^Python3(\d+)$/)) {
      candidates.push(p.join(programFiles, dir, 'python.exe'));
    }
    // pyenv-win: its shims are batch files, which cannot be run directly; its versions can.
    const versions = p.join(pyenvRoot, 'pyenv-win', 'versions');
    for (const dir of versionFolders(host.listDir(versions), /^3\.(\d+)(?:\.\d+)?$/)) {
      candidates.push(p.join(versions, dir, 'python.exe'));
    }
  } else {
    if (host.platform === 'darwin') {
      // Homebrew on Apple silicon, then on Intel (where python.org's installer links too).
      candidates.push('/opt/homebrew/bin/python3', '/usr/local/bin/python3');
      // python.org's framework builds, newest first.
      const frameworks = '/Library/Frameworks/Python.framework/Versions';
      for (const dir of versionFolders(host.listDir(frameworks), /^3\.(\d+)$/)) {
        candidates.push(p.join(frameworks, dir, 'bin', 'python3'));
      }
    } else {
      candidates.push('/home/linuxbrew/.linuxbrew/bin/python3');
    }
    // pyenv's shim runs the version pyenv selects (VS Code started from the Dock or a desktop
    // menu does not have it on PATH).
    candidates.push(p.join(pyenvRoot, 'shims', 'python3'));
  }
  return candidates.filter((c, i) => candidates.indexOf(c) === i && host.isFile(c));
}

/** Interpreters to try by name on PATH after the plain ones: each supported version's own name. */
export function versionedCommands(platform: NodeJS.Platform): Array<{ command: string; args: string[] }> {
  if (platform === 'win32') {
    // The `py` launcher picks a given version among all it knows (registry, Store, python.org).
    return SUPPORTED_MINORS.map((m) => ({ command: 'py', args: [`-3.${m}`] }));
  }
  return SUPPORTED_MINORS.map((m) => ({ command: `python3.${m}`, args: [] }));
}
