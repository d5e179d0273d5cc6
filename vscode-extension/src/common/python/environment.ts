/**
 * The server's private Python environment. The VSIX carries `bundled/`: the Steadyhand server wheel,
 * the wheels of its dependencies (pygls, lsprotocol, attrs, cattrs, xxhash, watchdog, … — xxhash for
 * several Python versions and platforms), pip's own wheel, and `manifest.json`. On first start the
 * extension installs them, with pip run straight from its wheel (so the interpreter needs neither pip
 * nor venv), into `<globalStorage>/python/<key>/site`, where the key depends on the server version
 * and the interpreter. The server then runs as `python -m steadyhand serve` with PYTHONPATH set to
 * that folder. Nothing is installed into the user's interpreter. The folder is a `pip install
 * --target` folder, not a virtual environment: the packages sit at its top on every system, and
 * nothing is run from a `bin/` or `Scripts\` in it (the server and the MCP launcher both run
 * `python -m steadyhand`).
 *
 * No `vscode` import: the caller passes paths and a logger.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

export interface BundleManifest {
  /** Version of the bundled server package. */
  serverVersion: string;
  /** Requirement to install, e.g. `steadyhand==0.1.0`. */
  requirement: string;
  /** File name of pip's wheel inside `wheels/`. */
  pipWheel: string;
  /** All wheel file names (for the environment key). */
  wheels: string[];
  /** The VS Code platforms whose wheels the bundle carries (all of them for a universal build). */
  targets?: string[];
  /** The CPython versions whose wheels the build asked for. */
  pythonVersions?: string[];
}

export interface PythonCommand {
  command: string;
  args: string[];
  executable: string;
  version: readonly number[];
}

export interface EnvResult {
  /** Folder to put on PYTHONPATH, or undefined when the interpreter already has steadyhand (dev mode). */
  sitePackages: string | undefined;
  /** What happened, for the log. */
  how: 'cached' | 'installed' | 'installed-online' | 'preinstalled';
}

export type Log = (line: string) => void;

/** The VS Code platform of a machine (`linux-x64`, `win32-x64`, `darwin-arm64`, …). */
export function vscodePlatform(platform: string, arch: string): string {
  return `${platform}-${arch}`;
}

/**
 * What the log should say when the bundle was built for other platforms than this one (a VSIX
 * installed by hand on the wrong system): its compiled wheels do not fit, so pip falls back to
 * the package index. Undefined when it fits, or for a bundle that does not say.
 */
export function bundlePlatformNote(manifest: BundleManifest, platform: string, arch: string): string | undefined {
  const here = vscodePlatform(platform, arch);
  if (!manifest.targets || manifest.targets.length === 0 || manifest.targets.includes(here)) {
    return undefined;
  }
  return `This extension was built for ${manifest.targets.join(', ')}, not ${here}: its compiled dependencies will come from the package index. Install the VSIX built for ${here}.`;
}

export function readManifest(bundledDir: string): BundleManifest | undefined {
  const file = path.join(bundledDir, 'manifest.json');
  if (!fs.existsSync(file)) {
    return undefined;
  }
  return JSON.parse(fs.readFileSync(file, 'utf8')) as BundleManifest;
}

/** Folder name for an environment: changes when the bundle or the interpreter changes. */
export function envKey(manifest: BundleManifest, py: PythonCommand, platform: string, arch: string): string {
  const h = createHash('sha256');
  h.update(JSON.stringify([manifest.serverVersion, [...manifest.wheels].sort(), py.executable, py.version, platform, arch]));
  return `${manifest.serverVersion}-py${py.version[0]}${py.version[1]}-${h.digest('hex').slice(0, 12)}`;
}

interface RunResult {
  code: number | null;
  output: string;
}

function run(command: string, args: string[], env: NodeJS.ProcessEnv, timeoutMs: number): Promise<RunResult> {
  return new Promise((resolve) => {
    let output = '';
    const child = spawn(command, args, { env, stdio: ['ignore', 'pipe', 'pipe'], windowsHide: true });
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    child.on('error', (err) => {
      clearTimeout(timer);
      resolve({ code: -1, output: output + String(err) });
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

/**
 * A copy of `base` without the variables `drop` names. Windows treats variable names without
 * case (`PythonPath` is `PYTHONPATH` to Python and pip there), so there the test sees them in
 * capitals; elsewhere names are compared as they are.
 */
function withoutVariables(base: NodeJS.ProcessEnv, drop: (upperName: string) => boolean, platform: NodeJS.Platform): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(base)) {
    if (!drop(platform === 'win32' ? k.toUpperCase() : k)) {
      env[k] = v;
    }
  }
  return env;
}

const SET_FOR_PYTHON = new Set(['PYTHONHOME', 'PYTHONPATH', 'PYTHONNOUSERSITE', 'PYTHONUNBUFFERED', 'PYTHONUTF8']);

/** A clean environment for running Python helpers (no user site, no inherited PYTHONPATH). */
export function pythonEnv(
  sitePackages: string | undefined,
  base: NodeJS.ProcessEnv = process.env,
  platform: NodeJS.Platform = process.platform,
): NodeJS.ProcessEnv {
  const env = withoutVariables(base, (name) => SET_FOR_PYTHON.has(name), platform);
  env.PYTHONNOUSERSITE = '1';
  env.PYTHONUNBUFFERED = '1';
  env.PYTHONUTF8 = '1';
  if (sitePackages) {
    env.PYTHONPATH = sitePackages;
  }
  return env;
}

/** Environment for the pip run: no pip configuration files or PIP_* variables of the machine. */
export function pipEnv(base: NodeJS.ProcessEnv = process.env, platform: NodeJS.Platform = process.platform): NodeJS.ProcessEnv {
  const env = withoutVariables(pythonEnv(undefined, base, platform), (name) => name.startsWith('PIP_'), platform);
  env.PIP_CONFIG_FILE = os.devNull;
  return env;
}

/**
 * Makes sure the server can be imported and returns where from. Installs the bundled wheels when
 * needed. `allowOnline`: when no bundled wheel fits the interpreter (e.g. a Python newer than the
 * bundle), retry letting pip fetch the missing dependencies from the package index.
 */
export async function ensureServerEnv(opts: {
  bundledDir: string;
  storageDir: string;
  python: PythonCommand;
  log: Log;
  allowOnline: boolean;
}): Promise<EnvResult> {
  const { bundledDir, storageDir, python, log } = opts;
  const manifest = readManifest(bundledDir);
  if (!manifest) {
    // Running from a source checkout without a bundle: use the interpreter's own steadyhand.
    const probe = await run(python.command, [...python.args, '-c', 'import steadyhand'], pythonEnv(undefined), 30_000);
    if (probe.code === 0) {
      log('No bundled server in this build; using the steadyhand package installed in the interpreter.');
      return { sitePackages: undefined, how: 'preinstalled' };
    }
    throw new Error(
      `This build of the extension carries no bundled server (missing ${path.join(bundledDir, 'manifest.json')}) and ${python.executable} cannot import steadyhand.`,
    );
  }
  const note = bundlePlatformNote(manifest, process.platform, process.arch);
  if (note) {
    log(note);
  }
  const key = envKey(manifest, python, process.platform, process.arch);
  const root = path.join(storageDir, 'python', key);
  const site = path.join(root, 'site');
  const marker = path.join(root, 'complete.json');
  if (fs.existsSync(marker)) {
    return { sitePackages: site, how: 'cached' };
  }
  const wheels = path.join(bundledDir, 'wheels');
  const tmp = `${root}.tmp-${process.pid}-${Date.now()}`;
  fs.mkdirSync(tmp, { recursive: true });
  const pipMain = path.join(wheels, manifest.pipWheel, 'pip');
  const baseArgs = [
    ...python.args,
    pipMain,
    'install',
    '--disable-pip-version-check',
    '--no-input',
    '--no-warn-script-location',
    '--root-user-action=ignore',
    '--only-binary=:all:',
    '--target',
    path.join(tmp, 'site'),
    '--find-links',
    wheels,
  ];
  log(`Installing the bundled server ${manifest.requirement} for Python ${python.version.join('.')} into ${root}`);
  let how: EnvResult['how'] = 'installed';
  let res = await run(python.command, [...baseArgs, '--no-index', manifest.requirement], pipEnv(), 300_000);
  if (res.code !== 0 && opts.allowOnline) {
    log(`Offline install from the bundled wheels failed:\n${res.output.trim()}\nRetrying with the package index for missing dependencies.`);
    fs.rmSync(path.join(tmp, 'site'), { recursive: true, force: true });
    res = await run(python.command, [...baseArgs, manifest.requirement], pipEnv(), 600_000);
    how = 'installed-online';
  }
  if (res.code !== 0) {
    fs.rmSync(tmp, { recursive: true, force: true });
    throw new Error(`Installing the bundled server failed (pip exit code ${res.code}):\n${res.output.trim()}`);
  }
  log(res.output.trim());
  const check = await run(python.command, [...python.args, '-c', 'import steadyhand, sys; print(steadyhand.__file__)'], pythonEnv(path.join(tmp, 'site')), 60_000);
  if (check.code !== 0) {
    fs.rmSync(tmp, { recursive: true, force: true });
    throw new Error(`The installed server cannot be imported:\n${check.output.trim()}`);
  }
  fs.writeFileSync(
    path.join(tmp, 'complete.json'),
    JSON.stringify({ manifest, python: python.executable, version: python.version, installed: new Date().toISOString() }, null, 2),
  );
  fs.rmSync(root, { recursive: true, force: true });
  try {
    fs.renameSync(tmp, root);
  } catch (err) {
    // Another window may have finished the same install first.
    fs.rmSync(tmp, { recursive: true, force: true });
    if (!fs.existsSync(marker)) {
      throw err;
    }
  }
  return { sitePackages: site, how };
}

/** Removes environments of other bundle versions (kept: the current key and anything in use). */
export function pruneOldEnvs(storageDir: string, keep: string, log: Log): void {
  const dir = path.join(storageDir, 'python');
  if (!fs.existsSync(dir)) {
    return;
  }
  const version = keep.split('-py')[0];
  for (const name of fs.readdirSync(dir)) {
    if (name !== keep && !name.startsWith(`${version}-`)) {
      try {
        fs.rmSync(path.join(dir, name), { recursive: true, force: true });
        log(`Removed the old server environment ${name}`);
      } catch {
        // in use on Windows, or gone already
      }
    }
  }
}
