/**
 * Choosing the Python interpreter that runs the server. Pure logic (no `vscode` import): the
 * extension supplies the candidates and a probe function; unit tests supply fakes.
 *
 * Order: the `steadyhand.server.python` setting (authoritative when set: if it is unusable we say
 * so and do not silently run another interpreter), else the Python extension's selected
 * interpreter, else `python3` (`python` / `py -3` on Windows) on PATH, then (given the system,
 * locations.ts) each supported version by name (`python3.13`; `py -3.13`) and the usual install
 * locations. A folder given as the interpreter (a virtual environment) stands for the interpreter
 * in it (`Scripts\python.exe` on Windows, `bin/python3` elsewhere).
 */
import { installedInterpreters, interpreterAt, versionedCommands, type HostSystem } from './locations';

export const MIN_PYTHON: readonly [number, number] = [3, 11];

export type CandidateSource = 'setting' | 'python-extension' | 'path' | 'location';

export interface Candidate {
  /** Executable (absolute path or a name looked up on PATH). */
  command: string;
  /** Arguments placed before the script arguments (e.g. `-3` for the Windows `py` launcher). */
  args: string[];
  source: CandidateSource;
}

export interface ProbeInfo {
  version: [number, number, number];
  executable: string;
}

export type ProbeResult = { ok: true; info: ProbeInfo } | { ok: false; reason: string };

export type Probe = (candidate: Candidate) => Promise<ProbeResult>;

export interface ResolvedInterpreter {
  ok: true;
  command: string;
  args: string[];
  executable: string;
  version: [number, number, number];
  source: CandidateSource;
  /** Candidates that were tried and rejected before this one. */
  skipped: string[];
}

export interface InterpreterError {
  ok: false;
  /** One clear sentence for the notification. */
  message: string;
  /** Details for the log, one line per candidate tried. */
  details: string[];
}

const SOURCE_LABEL: Record<CandidateSource, string> = {
  setting: 'the setting steadyhand.server.python',
  'python-extension': "the Python extension's selected interpreter",
  path: 'PATH',
  location: 'a usual install location',
};

export function describeCandidate(c: Candidate): string {
  return `${[c.command, ...c.args].join(' ')} (from ${SOURCE_LABEL[c.source]})`;
}

/**
 * Builds the ordered candidate list. `setting` is the raw setting value. `host`: the system, for
 * folders given as interpreters, versioned names and install locations (without it, the setting,
 * the Python extension's interpreter and the plain names on PATH).
 */
export function interpreterCandidates(
  setting: string | undefined,
  pythonExtensionPath: string | undefined,
  platform: NodeJS.Platform,
  host?: HostSystem,
): Candidate[] {
  const at = (p: string): string => (host ? interpreterAt(p, host) : p);
  const configured = (setting ?? '').trim();
  if (configured !== '') {
    return [{ command: at(configured), args: [], source: 'setting' }];
  }
  const out: Candidate[] = [];
  if (pythonExtensionPath && pythonExtensionPath.trim() !== '') {
    out.push({ command: at(pythonExtensionPath.trim()), args: [], source: 'python-extension' });
  }
  if (platform === 'win32') {
    out.push({ command: 'python', args: [], source: 'path' });
    out.push({ command: 'py', args: ['-3'], source: 'path' });
  } else {
    out.push({ command: 'python3', args: [], source: 'path' });
  }
  if (host) {
    for (const c of versionedCommands(platform)) {
      out.push({ ...c, source: 'path' });
    }
    for (const file of installedInterpreters(host)) {
      if (!out.some((c) => c.command === file)) {
        out.push({ command: file, args: [], source: 'location' });
      }
    }
  }
  return out;
}

export function versionOk(v: readonly number[]): boolean {
  const [major = 0, minor = 0] = v;
  return major > MIN_PYTHON[0] || (major === MIN_PYTHON[0] && minor >= MIN_PYTHON[1]);
}

export function formatVersion(v: readonly number[]): string {
  return v.join('.');
}

/** The code the probe runs with `python -c`: prints one JSON line. */
export const PROBE_CODE =
  'import json, sys; print(json.dumps({"version": list(sys.version_info[:3]), "executable": sys.executable}))';

/** Parses the probe's stdout. */
export function parseProbeOutput(stdout: string): ProbeResult {
  const line = stdout.trim().split(/\r?\n/).pop() ?? '';
  try {
    const data = JSON.parse(line) as { version?: unknown; executable?: unknown };
    const v = data.version;
    if (
      Array.isArray(v) &&
      v.length === 3 &&
      v.every((n) => typeof n === 'number') &&
      typeof data.executable === 'string'
    ) {
      return { ok: true, info: { version: [v[0], v[1], v[2]] as [number, number, number], executable: data.executable } };
    }
  } catch {
    // fall through
  }
  return { ok: false, reason: `unexpected output from the interpreter: ${JSON.stringify(stdout.slice(0, 200))}` };
}

/** Why running a candidate failed, in a few words (`code`: the spawn error's, if any). */
export function probeFailure(command: string, code: string | undefined, output: string, platform: NodeJS.Platform): string {
  if (code === 'ENOENT') {
    return 'not found';
  }
  if (platform === 'win32' && code === 'EINVAL' && /\.(bat|cmd)$/i.test(command)) {
    // Node runs no batch file without a shell (pyenv-win's shims are batch files).
    return 'a batch file cannot be run as the interpreter: name the python.exe it runs';
  }
  return `failed: ${output.trim().split('\n').pop() ?? ''}`;
}

/** Tries the candidates in order and returns the first usable one (Python >= 3.11). */
export async function resolveInterpreter(candidates: Candidate[], probe: Probe): Promise<ResolvedInterpreter | InterpreterError> {
  const details: string[] = [];
  for (const c of candidates) {
    const r = await probe(c);
    if (!r.ok) {
      details.push(`${describeCandidate(c)}: ${r.reason}`);
      continue;
    }
    if (!versionOk(r.info.version)) {
      details.push(
        `${describeCandidate(c)}: Python ${formatVersion(r.info.version)} is too old (${formatVersion(MIN_PYTHON)} or newer is needed)`,
      );
      continue;
    }
    return {
      ok: true,
      command: c.command,
      args: c.args,
      executable: r.info.executable || c.command,
      version: r.info.version,
      source: c.source,
      skipped: details,
    };
  }
  const first = candidates[0];
  let message: string;
  if (first?.source === 'setting') {
    message = `Steadyhand cannot start: the interpreter in the setting steadyhand.server.python ("${first.command}") is not a usable Python ${formatVersion(MIN_PYTHON)}+.`;
  } else {
    message = `Steadyhand cannot start: no Python ${formatVersion(MIN_PYTHON)} or newer was found (tried ${candidates
      .map((c) => [c.command, ...c.args].join(' '))
      .join(', ')}). Install one or set steadyhand.server.python.`;
  }
  return { ok: false, message, details };
}
