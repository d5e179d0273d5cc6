/**
 * The language client's life: a start finds Python (discovery.ts), prepares the private
 * environment (environment.ts) and starts the client (client.ts); a server that exits is started
 * again a few times (crashRestarts.ts); stops and restarts wait for a start under way
 * (lifecycle.ts). Every step reports into the state (status.ts).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { CloseAction, State, type CloseHandlerResult, type LanguageClient, type StateChangeEvent } from 'vscode-languageclient/node';
import { InterpreterDiscovery } from '../common/python/discovery';
import { ensureServerEnv, pruneOldEnvs } from '../common/python/environment';
import { describeCandidate, formatVersion, type ResolvedInterpreter } from '../common/python/interpreter';
import { errorText, withTimeout } from '../common/utilities';
import type { ActivityLog } from './activity';
import { createClient, type ClientHost } from './client';
import { CrashRestarts } from './crashRestarts';
import { Lifecycle } from './lifecycle';
import type { NotificationAction, OnceNotifier } from './notifications';
import type { ServerStateModel } from './status';

/** How long a start waits for the server's initialize answer, and a stop for a client's start. */
const CLIENT_START_WAIT_MS = 60_000;

/** What the client hands on to the rest of the extension (everything but its own life). */
export type ClientEvents = Omit<ClientHost, 'output' | 'closed' | 'stateChanged'>;

export interface ClientLifecycleDeps {
  context: vscode.ExtensionContext;
  output: vscode.LogOutputChannel;
  activity: ActivityLog;
  state: ServerStateModel;
  notifier: OnceNotifier;
  events: ClientEvents;
  /** The private environment is ready for this interpreter (the MCP launcher follows it). */
  environmentReady(storageDir: string, interp: ResolvedInterpreter, sitePackages: string | undefined): void;
  /** The server runs and answered `initialize`. */
  running(): void;
}

export class ClientLifecycle implements vscode.Disposable {
  private current: LanguageClient | undefined;
  private interp: ResolvedInterpreter | undefined;
  private site: string | undefined;
  private readonly crashes = new CrashRestarts();
  private readonly discovery: InterpreterDiscovery;
  private readonly lifecycle = new Lifecycle({
    start: (superseded) => this.doStart(superseded),
    stop: () => this.stopCurrentClient(),
    willRestart: () => {
      this.deps.state.set('starting');
      this.crashes.reset();
    },
    onError: (err) => this.deps.output.warn(`Starting the server: ${errorText(err)}`),
  });

  constructor(private readonly deps: ClientLifecycleDeps) {
    this.discovery = new InterpreterDiscovery(deps.output, () => {
      if (this.interp?.source === 'python-extension' || deps.state.state === 'failed') {
        deps.output.info("The Python extension's interpreter changed: restarting the server");
        void this.restart();
      }
    });
  }

  /** The running (or starting) client. */
  get client(): LanguageClient | undefined {
    return this.current;
  }

  get interpreter(): ResolvedInterpreter | undefined {
    return this.interp;
  }

  /** The private environment the server imports from. */
  get sitePackages(): string | undefined {
    return this.site;
  }

  get crashRestarts(): number {
    return this.crashes.total;
  }

  /** Whether a start or restart is under way. */
  get busy(): boolean {
    return this.lifecycle.busy;
  }

  private readonly openSettingAction: NotificationAction = {
    title: 'Open Setting',
    run: () => void vscode.commands.executeCommand('workbench.action.openSettings', 'steadyhand.server.python'),
  };
  private readonly showLogAction: NotificationAction = { title: 'Show Log', run: () => this.deps.output.show(true) };

  start(): Promise<void> {
    return this.lifecycle.start();
  }

  /** Stops and starts the server (see Lifecycle for restarts asked for during a start). */
  restart(): Promise<void> {
    return this.lifecycle.restart();
  }

  /** Stops the server for good (the extension is going away). */
  async stop(): Promise<void> {
    await this.lifecycle.close();
    this.deps.state.set('stopped');
  }

  private failed(message: string, key: string, ...actions: NotificationAction[]): void {
    this.deps.activity.addServer(message, false);
    this.deps.state.set('failed', message);
    void this.deps.notifier.notify(key, 'error', message, ...actions);
  }

  /** `superseded()`: a stop or restart came while this start was waiting; the stopper owns the state now. */
  private async doStart(superseded: () => boolean): Promise<void> {
    const { output, state } = this.deps;
    this.interp = undefined;
    this.site = undefined;
    state.set('starting');
    const { setting, resolved } = await this.discovery.find();
    if (superseded()) {
      return;
    }
    if (!resolved.ok) {
      for (const d of resolved.details) {
        output.error(d);
      }
      output.error(resolved.message);
      this.failed(resolved.message, `python:${setting ?? ''}`, this.openSettingAction, this.showLogAction);
      return;
    }
    for (const d of resolved.skipped) {
      output.warn(`Skipped ${d}`);
    }
    this.interp = resolved;
    output.info(`Using Python ${formatVersion(resolved.version)} at ${resolved.executable} (${describeCandidate(resolved)})`);

    const bundledDir = path.join(this.deps.context.extensionPath, 'bundled');
    const storageDir = this.deps.context.globalStorageUri.fsPath;
    try {
      fs.mkdirSync(storageDir, { recursive: true });
      const env = await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Window, title: 'Steadyhand: preparing the server' },
        () =>
          ensureServerEnv({
            bundledDir,
            storageDir,
            python: { command: resolved.command, args: resolved.args, executable: resolved.executable, version: resolved.version },
            log: (l) => output.info(l),
            allowOnline: true,
          }),
      );
      if (superseded()) {
        return;
      }
      this.site = env.sitePackages;
      output.info(env.sitePackages ? `Server environment ${env.how}: ${env.sitePackages}` : 'Server: using the interpreter’s own steadyhand package');
      if (env.sitePackages) {
        pruneOldEnvs(storageDir, path.basename(path.dirname(env.sitePackages)), (l) => output.info(l));
      }
      this.deps.environmentReady(storageDir, resolved, env.sitePackages);
    } catch (err) {
      if (superseded()) {
        return;
      }
      output.error(err instanceof Error ? err.message : String(err));
      const msg = `Steadyhand cannot start: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}`;
      this.failed(msg, `env:${resolved.executable}`, this.showLogAction, this.openSettingAction);
      return;
    }

    const client = this.createClient(resolved);
    this.current = client;
    try {
      const started = await withTimeout(client.start().then(() => true), CLIENT_START_WAIT_MS);
      if (superseded()) {
        return;
      }
      if (!started) {
        // Stopping a starting client fails, but it still ends the server process.
        this.current = undefined;
        void this.stopClient(client, false);
        throw new Error(`it did not answer the initialize request within ${CLIENT_START_WAIT_MS / 1000} s`);
      }
      const info = client.initializeResult?.serverInfo;
      const msg = `${info?.name ?? 'steadyhand'} ${info?.version ?? ''} running (Python ${formatVersion(resolved.version)})`.replace(/\s+/g, ' ');
      output.info(msg);
      this.deps.activity.addServer(msg, true);
      state.set('running');
      this.deps.running();
    } catch (err) {
      if (superseded()) {
        return;
      }
      const msg = `Steadyhand server failed to start: ${errorText(err)}`;
      output.error(msg);
      this.failed(msg, `start:${resolved.executable}`, this.showLogAction);
    }
  }

  private createClient(interp: ResolvedInterpreter): LanguageClient {
    return createClient(
      {
        interpreter: interp,
        sitePackages: this.site,
        cwd: vscode.workspace.workspaceFolders?.[0]?.uri.fsPath ?? this.deps.context.globalStorageUri.fsPath,
        maxRestarts: this.crashes.max,
      },
      {
        ...this.deps.events,
        output: this.deps.output,
        closed: (client) => this.clientClosed(client),
        stateChanged: (client, e) => this.clientStateChanged(client, e),
      },
    );
  }

  /** The server process ended: restart it (a few times in a while), or give up and say so. */
  private clientClosed(client: LanguageClient): CloseHandlerResult {
    const { output, activity, state } = this.deps;
    if (this.current !== client) {
      // A client this manager already let go of (stopped while it was starting).
      return { action: CloseAction.DoNotRestart, handled: true };
    }
    const now = Date.now();
    const decision = this.crashes.crashed(now);
    if (decision.restart) {
      const msg = `The Steadyhand server stopped unexpectedly; restarting it (${decision.inWindow}/${this.crashes.max} in 3 minutes).`;
      output.warn(msg);
      activity.addServer(msg, false);
      // Calls made meanwhile wait for the restarted server instead of failing.
      state.set('starting');
      return { action: CloseAction.Restart, handled: true };
    }
    const msg = `The Steadyhand server crashed ${this.crashes.max} times in 3 minutes and was not restarted.`;
    output.error(msg);
    activity.addServer(msg, false);
    state.set('failed', msg);
    void this.deps.notifier.notify(`crash:${now}`, 'error', `${msg} See the log for the reason.`, this.showLogAction, {
      title: 'Restart',
      run: () => void this.restart(),
    });
    return { action: CloseAction.DoNotRestart, handled: true };
  }

  private clientStateChanged(client: LanguageClient, e: StateChangeEvent): void {
    const state = this.deps.state;
    if (this.current !== client) {
      return;
    }
    if (e.newState === State.Running && state.state !== 'running' && !this.lifecycle.starting) {
      state.set('running');
    } else if (e.newState === State.Starting && state.state === 'running') {
      state.set('starting');
    } else if (e.newState === State.Stopped && state.state === 'running') {
      state.set('stopped');
    } else if (e.newState === State.StartFailed && !this.lifecycle.starting) {
      // The restart after a crash failed: calls must not wait for it.
      state.set('failed', 'The Steadyhand server stopped and could not be started again; see the Steadyhand output channel.');
    }
  }

  private async stopCurrentClient(): Promise<void> {
    const client = this.current;
    this.current = undefined;
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
      this.deps.output.warn(`Stopping the server: ${errorText(err)}`);
    }
  }

  dispose(): void {
    this.discovery.dispose();
  }
}
