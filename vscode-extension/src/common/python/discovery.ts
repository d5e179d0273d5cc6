/**
 * Finding the Python that runs the server: the `steadyhand.server.python` setting, else the
 * Python extension's selected interpreter, else `python3` on PATH and the usual install locations
 * (see interpreter.ts for the order and the checks, locations.ts for the places), each candidate
 * probed by running it.
 */
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as vscode from 'vscode';
import {
  interpreterCandidates,
  parseProbeOutput,
  probeFailure,
  PROBE_CODE,
  resolveInterpreter,
  type Candidate,
  type InterpreterError,
  type ProbeResult,
  type ResolvedInterpreter,
} from './interpreter';
import { pythonEnv } from './environment';
import type { HostSystem } from './locations';
import { CONFIG_SECTION } from '../settings';
import { withTimeout } from '../utilities';

/** Runs the candidate with the probe code: its version and executable, or why it cannot run. */
export function probe(candidate: Candidate): Promise<ProbeResult> {
  return new Promise((resolve) => {
    execFile(
      candidate.command,
      [...candidate.args, '-c', PROBE_CODE],
      { timeout: 20_000, windowsHide: true, env: pythonEnv(undefined) },
      (err, stdout, stderr) => {
        if (err) {
          const e = err as NodeJS.ErrnoException;
          resolve({ ok: false, reason: probeFailure(candidate.command, e.code, stderr || err.message, process.platform) });
          return;
        }
        resolve(parseProbeOutput(stdout));
      },
    );
  });
}

/** This machine, for the interpreter lookup. */
export function thisSystem(): HostSystem {
  const stat = (p: string): fs.Stats | undefined => {
    try {
      return fs.statSync(p);
    } catch {
      return undefined;
    }
  };
  return {
    platform: process.platform,
    env: process.env,
    home: os.homedir(),
    isFile: (p) => stat(p)?.isFile() ?? false,
    isDirectory: (p) => stat(p)?.isDirectory() ?? false,
    listDir: (p) => {
      try {
        return fs.readdirSync(p);
      } catch {
        return [];
      }
    },
  };
}

interface PythonExtensionApi {
  environments?: {
    getActiveEnvironmentPath?(resource?: vscode.Uri): { path?: string } | undefined;
    resolveEnvironment?(env: { path?: string } | string): Promise<{ executable?: { uri?: vscode.Uri } } | undefined>;
    onDidChangeActiveEnvironmentPath?: vscode.Event<unknown>;
  };
  settings?: { getExecutionDetails?(resource?: vscode.Uri): { execCommand?: string[] } | undefined };
}

export interface Discovered {
  /** The raw `steadyhand.server.python` setting. */
  setting: string | undefined;
  resolved: ResolvedInterpreter | InterpreterError;
}

/** Finds the interpreter, and tells when the Python extension's selection changes. */
export class InterpreterDiscovery implements vscode.Disposable {
  private pythonExtSub: vscode.Disposable | undefined;

  constructor(
    private readonly output: vscode.LogOutputChannel,
    /** Called when the Python extension's selected interpreter changes. */
    private readonly onPythonExtensionChange: () => void,
  ) {}

  /** The first usable candidate, or why none is. */
  async find(): Promise<Discovered> {
    const setting = vscode.workspace.getConfiguration(CONFIG_SECTION).get<string>('server.python');
    const fromExt = setting && setting.trim() !== '' ? undefined : await this.pythonExtensionInterpreter();
    const candidates = interpreterCandidates(setting, fromExt, process.platform, thisSystem());
    return { setting, resolved: await resolveInterpreter(candidates, probe) };
  }

  private async pythonExtensionInterpreter(): Promise<string | undefined> {
    const ext = vscode.extensions.getExtension<PythonExtensionApi>('ms-python.python');
    if (!ext) {
      return undefined;
    }
    try {
      const api = ext.isActive ? ext.exports : await withTimeout(ext.activate(), 20_000);
      const resource = vscode.workspace.workspaceFolders?.[0]?.uri;
      const envs = api?.environments;
      if (envs && !this.pythonExtSub && envs.onDidChangeActiveEnvironmentPath) {
        this.pythonExtSub = envs.onDidChangeActiveEnvironmentPath(() => this.onPythonExtensionChange());
      }
      const active = envs?.getActiveEnvironmentPath?.(resource);
      if (active?.path) {
        const resolved = envs?.resolveEnvironment ? await withTimeout(envs.resolveEnvironment(active), 20_000) : undefined;
        return resolved?.executable?.uri?.fsPath ?? active.path;
      }
      return api?.settings?.getExecutionDetails?.(resource)?.execCommand?.[0];
    } catch (err) {
      this.output.warn(`Could not ask the Python extension for its interpreter: ${String(err)}`);
      return undefined;
    }
  }

  dispose(): void {
    this.pythonExtSub?.dispose();
  }
}
