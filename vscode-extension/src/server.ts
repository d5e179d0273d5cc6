/**
 * Owns the language client's life: prepares the bundled server for the interpreter found
 * (discovery.ts), starts the client (client.ts), restarts it when it crashes, keeps the state,
 * and forwards settings.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import {
  CloseAction,
  DidChangeConfigurationNotification,
  ExecuteCommandRequest,
  State,
  type ApplyWorkspaceEditParams,
  type CloseHandlerResult,
  type LanguageClient,
  type StateChangeEvent,
} from 'vscode-languageclient/node';
import type { ActivityLog } from './activity';
import type { CommandEvent, FileChangedEvent, ServerState, ServerStatus } from './api';
import { createClient, type ClientHost } from './client';
import { InterpreterDiscovery } from './discovery';
import { EditedVersions, editedUris } from './editVersions';
import { isCommandResult, notRunningResult, requestErrorResult, type CommandResult } from './format';
import { describeCandidate, formatVersion, type ResolvedInterpreter } from './interpreter';
import { Lifecycle } from './lifecycle';
import { launcherScript } from './mcp';
import { changedNotebook, unsavedNotebookResult } from './notebooks';
import { ensureServerEnv, pruneOldEnvs } from './pythonEnv';
import { handleSaveDocuments, openDocument, type SaveDocumentsParams, type SaveDocumentsResult } from './saveDocuments';
import { CONFIG_SECTION, readServerSettings, type ServerSettings } from './settings';
import { errorText, withTimeout } from './timeout';

const RESTART_WINDOW_MS = 3 * 60_000;
const MAX_RESTARTS = 5;
/** How long a start waits for the server's initialize answer, and a stop for a client's start. */
const CLIENT_START_WAIT_MS = 60_000;

/** Whether the notebook at ``notebookPath`` is open in a notebook editor with unsaved changes. */
function unsavedNotebook(notebookPath: string): boolean {
  return vscode.workspace.notebookDocuments.some(
    (nb) => nb.isDirty && nb.uri.scheme === 'file' && path.resolve(nb.uri.fsPath) === path.resolve(notebookPath),
  );
}

export class ServerManager implements vscode.Disposable {
  private client: LanguageClient | undefined;
  private state: ServerState = 'stopped';
  private error: string | undefined;
  private interp: ResolvedInterpreter | undefined;
  private sitePackages: string | undefined;
  /** The launcher of `steadyhand mcp` with this server's interpreter and environment. */
  private launcher: string | undefined;
  private readyWaiters: Array<{ resolve: () => void; reject: (e: Error) => void }> = [];
  private restarts: number[] = [];
  private crashRestarts = 0;
  private readonly lifecycle = new Lifecycle({
    start: (superseded) => this.doStart(superseded),
    stop: () => this.stopCurrentClient(),
    willRestart: () => {
      this.setState('starting');
      this.restarts = [];
    },
    onError: (err) => this.output.warn(`Starting the server: ${errorText(err)}`),
  });
  private readonly editedVersions = new EditedVersions();
  private notified = new Set<string>();
  private readonly discovery: InterpreterDiscovery;
  private readonly disposables: vscode.Disposable[] = [];

  private readonly statusEmitter = new vscode.EventEmitter<ServerStatus>();
  readonly onDidChangeStatus = this.statusEmitter.event;
  private readonly fileEmitter = new vscode.EventEmitter<FileChangedEvent>();
  readonly onDidChangeFile = this.fileEmitter.event;
  private readonly commandEmitter = new vscode.EventEmitter<CommandEvent>();
  readonly onDidRunCommand = this.commandEmitter.event;
  private readonly applyEditEmitter = new vscode.EventEmitter<{ params: ApplyWorkspaceEditParams; applying: boolean }>();
  /** The server's edits, as they start and end being applied (agent changes in open documents). */
  readonly onApplyingEdit = this.applyEditEmitter.event;

  constructor(
    private readonly context: vscode.ExtensionContext,
    readonly output: vscode.LogOutputChannel,
    private readonly activity: ActivityLog,
  ) {
    this.discovery = new InterpreterDiscovery(output, () => {
      if (this.interp?.source === 'python-extension' || this.state === 'failed') {
        this.output.info("The Python extension's interpreter changed: restarting the server");
        void this.restart();
      }
    });
    this.disposables.push(
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (!e.affectsConfiguration(CONFIG_SECTION)) {
          return;
        }
        if (e.affectsConfiguration(`${CONFIG_SECTION}.server.python`)) {
          this.output.info('steadyhand.server.python changed: restarting the server');
          this.notified.clear();
          void this.restart();
        } else {
          this.pushSettings();
        }
      }),
      vscode.workspace.onDidCloseTextDocument((doc) => this.editedVersions.forget(doc.uri.toString())),
    );
  }

  settings(): ServerSettings {
    const cfg = vscode.workspace.getConfiguration(CONFIG_SECTION);
    const { settings, problems } = readServerSettings((name) => cfg.get(name));
    for (const p of problems) {
      this.output.warn(p);
    }
    return settings;
  }

  private pushSettings(): void {
    if (this.client && this.state === 'running') {
      const settings = this.settings();
      this.output.info(`Sending settings to the server: ${JSON.stringify(settings)}`);
      void this.client.sendNotification(DidChangeConfigurationNotification.type, { settings: { [CONFIG_SECTION]: settings } });
    }
  }

  status(): ServerStatus {
    const init = this.client?.initializeResult;
    return {
      state: this.state,
      editCount: this.activity.editCount,
      python: this.interp?.executable,
      pythonVersion: this.interp ? formatVersion(this.interp.version) : undefined,
      sitePackages: this.sitePackages,
      serverName: init?.serverInfo?.name,
      serverVersion: init?.serverInfo?.version,
      commands: init?.capabilities.executeCommandProvider?.commands ?? [],
      crashRestarts: this.crashRestarts,
      error: this.error,
    };
  }

  private setState(state: ServerState, error?: string): void {
    this.state = state;
    this.error = error;
    if (state === 'running') {
      for (const w of this.readyWaiters.splice(0)) {
        w.resolve();
      }
    } else if (state === 'failed' || state === 'stopped') {
      const reason = state === 'failed' ? (error ?? 'the Steadyhand server failed to start') : 'the Steadyhand server was stopped';
      for (const w of this.readyWaiters.splice(0)) {
        w.reject(new Error(reason));
      }
    }
    this.statusEmitter.fire(this.status());
  }

  /** Fires the status event (e.g. after the edit count changed). */
  refreshStatus(): void {
    this.statusEmitter.fire(this.status());
  }

  ready(timeoutMs = 120_000): Promise<void> {
    if (this.state === 'running') {
      return Promise.resolve();
    }
    if (this.state === 'failed') {
      return Promise.reject(new Error(this.error ?? 'the Steadyhand server is not running'));
    }
    if (this.state === 'stopped' && !this.lifecycle.busy) {
      return Promise.reject(new Error('the Steadyhand server is stopped'));
    }
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`the Steadyhand server did not start within ${timeoutMs} ms`)), timeoutMs);
      this.readyWaiters.push({
        resolve: () => {
          clearTimeout(timer);
          resolve();
        },
        reject: (e) => {
          clearTimeout(timer);
          reject(e);
        },
      });
    });
  }

  private async notifyOnce(key: string, kind: 'error' | 'warning', message: string, ...actions: Array<{ title: string; run: () => void }>): Promise<void> {
    if (this.notified.has(key)) {
      return;
    }
    this.notified.add(key);
    const show = kind === 'error' ? vscode.window.showErrorMessage : vscode.window.showWarningMessage;
    const picked = await show(message, ...actions.map((a) => a.title));
    actions.find((a) => a.title === picked)?.run();
  }

  private openSettingAction = { title: 'Open Setting', run: () => void vscode.commands.executeCommand('workbench.action.openSettings', 'steadyhand.server.python') };
  private showLogAction = { title: 'Show Log', run: () => this.output.show(true) };

  start(): Promise<void> {
    return this.lifecycle.start();
  }

  /** `superseded()`: a stop or restart came while this start was waiting; the stopper owns the state now. */
  private async doStart(superseded: () => boolean): Promise<void> {
    this.interp = undefined;
    this.sitePackages = undefined;
    this.setState('starting');
    const { setting, resolved } = await this.discovery.find();
    if (superseded()) {
      return;
    }
    if (!resolved.ok) {
      for (const d of resolved.details) {
        this.output.error(d);
      }
      this.output.error(resolved.message);
      this.activity.addServer(resolved.message, false);
      this.setState('failed', resolved.message);
      void this.notifyOnce(`python:${setting ?? ''}`, 'error', resolved.message, this.openSettingAction, this.showLogAction);
      return;
    }
    for (const d of resolved.skipped) {
      this.output.warn(`Skipped ${d}`);
    }
    this.interp = resolved;
    this.output.info(`Using Python ${formatVersion(resolved.version)} at ${resolved.executable} (${describeCandidate(resolved)})`);

    const bundledDir = path.join(this.context.extensionPath, 'bundled');
    const storageDir = this.context.globalStorageUri.fsPath;
    try {
      fs.mkdirSync(storageDir, { recursive: true });
      const env = await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Window, title: 'Steadyhand: preparing the server' },
        () =>
          ensureServerEnv({
            bundledDir,
            storageDir,
            python: { command: resolved.command, args: resolved.args, executable: resolved.executable, version: resolved.version },
            log: (l) => this.output.info(l),
            allowOnline: true,
          }),
      );
      if (superseded()) {
        return;
      }
      this.sitePackages = env.sitePackages;
      this.output.info(
        env.sitePackages ? `Server environment ${env.how}: ${env.sitePackages}` : 'Server: using the interpreter’s own steadyhand package',
      );
      if (env.sitePackages) {
        pruneOldEnvs(storageDir, path.basename(path.dirname(env.sitePackages)), (l) => this.output.info(l));
      }
      this.launcher = this.writeLauncher(storageDir, resolved, env.sitePackages);
    } catch (err) {
      if (superseded()) {
        return;
      }
      const msg = `Steadyhand cannot start: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}`;
      this.output.error(err instanceof Error ? err.message : String(err));
      this.activity.addServer(msg, false);
      this.setState('failed', msg);
      void this.notifyOnce(`env:${resolved.executable}`, 'error', msg, this.showLogAction, this.openSettingAction);
      return;
    }

    const client = this.createClient(resolved);
    this.client = client;
    try {
      const started = await withTimeout(client.start().then(() => true), CLIENT_START_WAIT_MS);
      if (superseded()) {
        return;
      }
      if (!started) {
        // Stopping a starting client fails, but it still ends the server process.
        this.client = undefined;
        void this.stopClient(client, false);
        throw new Error(`it did not answer the initialize request within ${CLIENT_START_WAIT_MS / 1000} s`);
      }
      const info = client.initializeResult?.serverInfo;
      const msg = `${info?.name ?? 'steadyhand'} ${info?.version ?? ''} running (Python ${formatVersion(resolved.version)})`.replace(/\s+/g, ' ');
      this.output.info(msg);
      this.activity.addServer(msg, true);
      this.setState('running');
      this.pushSettings();
    } catch (err) {
      if (superseded()) {
        return;
      }
      const msg = `Steadyhand server failed to start: ${errorText(err)}`;
      this.output.error(msg);
      this.activity.addServer(msg, false);
      this.setState('failed', msg);
      void this.notifyOnce(`start:${resolved.executable}`, 'error', msg, this.showLogAction);
    }
  }

  private createClient(interp: ResolvedInterpreter): LanguageClient {
    return createClient(
      {
        interpreter: interp,
        sitePackages: this.sitePackages,
        cwd: vscode.workspace.workspaceFolders?.[0]?.uri.fsPath ?? this.context.globalStorageUri.fsPath,
        maxRestarts: MAX_RESTARTS,
      },
      this.clientHost(),
    );
  }

  /** How the client reaches this manager. */
  private clientHost(): ClientHost {
    return {
      output: this.output,
      settings: () => this.settings(),
      closed: (client) => this.clientClosed(client),
      editApplied: (client, params) => this.recordEditedVersions(client, params.edit),
      applyingEdit: (params, applying) => this.applyEditEmitter.fire({ params, applying }),
      mcpCall: (p) => {
        const result: CommandResult = { ok: false, message: '', ...(p.result ?? {}) };
        this.observe(p.command, p.params ?? {}, result, { via: 'mcp', client: p.client, session: p.session });
      },
      fileChanged: (p) => {
        this.output.info(`File changed outside the agent: ${p.path} (${p.kind})`);
        this.activity.addFileChanged(p);
        this.fileEmitter.fire(p);
      },
      // Answer once disk has the text. Always per URI: an error reply would turn one document's
      // failure into "none saved" (the server tells the agent which change is only in the buffer,
      // and why). 8 s stays inside the server's own 10 s limit.
      saveDocuments: async (p: SaveDocumentsParams): Promise<SaveDocumentsResult> => {
        const result = await handleSaveDocuments(p, this.editedVersions, 8_000);
        for (const r of result.results.filter((o) => !o.saved)) {
          this.output.warn(`Could not save ${r.uri} for the server: ${r.error ?? ''}`);
        }
        return result;
      },
      stateChanged: (client, e) => this.clientStateChanged(client, e),
    };
  }

  /** The server process ended: restart it (a few times in a while), or give up and say so. */
  private clientClosed(client: LanguageClient): CloseHandlerResult {
    if (this.client !== client) {
      // A client this manager already let go of (stopped while it was starting).
      return { action: CloseAction.DoNotRestart, handled: true };
    }
    const now = Date.now();
    this.restarts = this.restarts.filter((t) => now - t < RESTART_WINDOW_MS);
    if (this.restarts.length < MAX_RESTARTS) {
      this.restarts.push(now);
      this.crashRestarts += 1;
      const msg = `The Steadyhand server stopped unexpectedly; restarting it (${this.restarts.length}/${MAX_RESTARTS} in 3 minutes).`;
      this.output.warn(msg);
      this.activity.addServer(msg, false);
      // Calls made meanwhile wait for the restarted server instead of failing.
      this.setState('starting');
      return { action: CloseAction.Restart, handled: true };
    }
    const msg = `The Steadyhand server crashed ${MAX_RESTARTS} times in 3 minutes and was not restarted.`;
    this.output.error(msg);
    this.activity.addServer(msg, false);
    this.setState('failed', msg);
    void this.notifyOnce(`crash:${now}`, 'error', `${msg} See the log for the reason.`, this.showLogAction, {
      title: 'Restart',
      run: () => void this.restart(),
    });
    return { action: CloseAction.DoNotRestart, handled: true };
  }

  private clientStateChanged(client: LanguageClient, e: StateChangeEvent): void {
    if (e.newState === State.Running && this.state !== 'running' && this.client === client && !this.lifecycle.starting) {
      this.setState('running');
    } else if (e.newState === State.Starting && this.client === client && this.state === 'running') {
      this.setState('starting');
    } else if (e.newState === State.Stopped && this.client === client && this.state === 'running') {
      this.setState('stopped');
    } else if (e.newState === State.StartFailed && this.client === client && !this.lifecycle.starting) {
      // The restart after a crash failed: calls must not wait for it.
      this.setState('failed', 'The Steadyhand server stopped and could not be started again; see the Steadyhand output channel.');
    }
  }

  /** After the server's edit is applied: each edited document's version, for a save request without one. */
  private recordEditedVersions(client: LanguageClient, edit: unknown): void {
    for (const uri of editedUris(edit)) {
      const doc = openDocument(client.protocol2CodeConverter.asUri(uri));
      if (doc) {
        this.editedVersions.record(doc.uri.toString(), doc.version);
      }
    }
  }

  private observe(command: string, params: Record<string, unknown>, result: CommandResult, over?: Pick<CommandEvent, 'via' | 'client' | 'session'>): void {
    const ev: CommandEvent = { command, params, result, ...over };
    this.activity.addCommand(ev);
    const from = ev.via === 'mcp' ? ` (over MCP${ev.client ? ` from ${ev.client}` : ''})` : '';
    this.output.info(`${command} ${typeof params.file_path === 'string' ? params.file_path : ''}${from}: ${result.ok ? 'ok' : `refused (${result.error ?? 'error'})`}`);
    this.commandEmitter.fire(ev);
    this.refreshStatus();
  }

  /** The launcher of `steadyhand mcp` (see mcp.ts), once the server's environment is ready. */
  mcpLauncher(): string | undefined {
    return this.launcher;
  }

  private writeLauncher(storageDir: string, interp: ResolvedInterpreter, sitePackages: string | undefined): string | undefined {
    const l = launcherScript(interp.command, interp.args, sitePackages, process.platform);
    const dir = path.join(storageDir, 'bin');
    const file = path.join(dir, l.name);
    try {
      fs.mkdirSync(dir, { recursive: true });
      const tmp = `${file}.tmp-${process.pid}`;
      fs.writeFileSync(tmp, l.content, { mode: 0o755 });
      fs.renameSync(tmp, file);
      return file;
    } catch (err) {
      this.output.warn(`Could not write the MCP launcher ${file}: ${errorText(err)}`);
      return undefined;
    }
  }

  /** Runs a server command with one parameter object; refusals and failures come back as results. */
  request(command: string, params: Record<string, unknown>, token?: vscode.CancellationToken): Promise<CommandResult> {
    return this.execute(command, [params], token);
  }

  /**
   * Runs a server command with the arguments of a VS Code command call (the server takes one
   * parameter object). Waits for a server that is starting or restarting; answers
   * `server_not_running` when there is none. A change to a notebook that has unsaved changes in
   * the notebook editor is refused here (`edit_rejected`): the server cannot see that editor.
   */
  async execute(command: string, args: unknown[], token?: vscode.CancellationToken): Promise<CommandResult> {
    const first: unknown = args[0];
    const params = typeof first === 'object' && first !== null && !Array.isArray(first) ? (first as Record<string, unknown>) : {};
    const notebook = changedNotebook(command, params, vscode.workspace.workspaceFolders?.[0]?.uri.fsPath, os.homedir());
    if (notebook !== undefined && unsavedNotebook(notebook)) {
      const refused = unsavedNotebookResult(notebook);
      this.observe(command, params, refused);
      return refused;
    }
    if (this.state !== 'running') {
      if (this.state === 'stopped' && !this.lifecycle.busy) {
        return notRunningResult();
      }
      try {
        await this.ready(60_000);
      } catch (err) {
        return notRunningResult(errorText(err));
      }
    }
    const client = this.client;
    if (!client) {
      return notRunningResult();
    }
    let result: CommandResult;
    try {
      const raw: unknown = await client.sendRequest(ExecuteCommandRequest.type, { command, arguments: args }, token);
      result = isCommandResult(raw) ? raw : { ok: false, error: 'server_error', message: `Unexpected result from the server: ${JSON.stringify(raw)}` };
    } catch (err) {
      result = requestErrorResult(err);
    }
    this.observe(command, params, result);
    return result;
  }

  /** Stops and starts the server (see Lifecycle for restarts asked for during a start). */
  restart(): Promise<void> {
    return this.lifecycle.restart();
  }

  /** Stops the server for good (the extension is going away). */
  async stop(): Promise<void> {
    await this.lifecycle.close();
    this.setState('stopped');
  }

  private async stopCurrentClient(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    if (client) {
      await this.stopClient(client, true);
    }
  }

  private async stopClient(client: LanguageClient, waitForStart: boolean): Promise<void> {
    if (waitForStart && client.state === State.Starting) {
      // Its own start (e.g. the restart after a crash) settles first, or stopping it would fail.
      const settled = (): undefined => undefined;
      await withTimeout(client.start().then(settled, settled), CLIENT_START_WAIT_MS);
    }
    try {
      await client.dispose(5_000);
    } catch (err) {
      this.output.warn(`Stopping the server: ${errorText(err)}`);
    }
  }

  dispose(): void {
    void this.stop();
    this.discovery.dispose();
    this.applyEditEmitter.dispose();
    for (const d of this.disposables) {
      d.dispose();
    }
    this.statusEmitter.dispose();
    this.fileEmitter.dispose();
    this.commandEmitter.dispose();
  }
}
