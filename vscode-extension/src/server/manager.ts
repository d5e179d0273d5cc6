/**
 * The server as the rest of the extension sees it: one object that starts, restarts and stops it,
 * reports its status, runs its commands and forwards the settings. The concerns live beside it:
 * the client's life (clientLifecycle.ts), the state and the calls waiting on it (status.ts), the
 * command calls (commands.ts) with the notebook guard (notebookGuard.ts), the documents the
 * server's edits changed (editedDocuments.ts), and the MCP launcher (../mcp/launcherFile.ts).
 */
import * as vscode from 'vscode';
import { DidChangeConfigurationNotification, type ApplyWorkspaceEditParams } from 'vscode-languageclient/node';
import type { CommandEvent, FileChangedEvent, ServerStatus } from '../api';
import { formatVersion } from '../common/python/interpreter';
import type { CommandResult } from '../common/results';
import { CONFIG_SECTION, readServerSettings, type ServerSettings } from '../common/settings';
import { McpLauncher } from '../mcp/launcherFile';
import type { ActivityLog } from './activity';
import { ClientLifecycle } from './clientLifecycle';
import { CommandRunner } from './commands';
import { EditedDocuments } from './editedDocuments';
import { OnceNotifier } from './notifications';
import { ServerStateModel } from './status';

export class ServerManager implements vscode.Disposable {
  private readonly statusEmitter = new vscode.EventEmitter<ServerStatus>();
  readonly onDidChangeStatus = this.statusEmitter.event;
  private readonly fileEmitter = new vscode.EventEmitter<FileChangedEvent>();
  readonly onDidChangeFile = this.fileEmitter.event;
  private readonly applyEditEmitter = new vscode.EventEmitter<{ params: ApplyWorkspaceEditParams; applying: boolean }>();
  /** The server's edits, as they start and end being applied (agent changes in open documents). */
  readonly onApplyingEdit = this.applyEditEmitter.event;

  private readonly state: ServerStateModel;
  private readonly notifier = new OnceNotifier();
  private readonly edited: EditedDocuments;
  private launcher: McpLauncher | undefined;
  private readonly clients: ClientLifecycle;
  private readonly commands: CommandRunner;
  private readonly disposables: vscode.Disposable[] = [];

  constructor(
    context: vscode.ExtensionContext,
    readonly output: vscode.LogOutputChannel,
    private readonly activity: ActivityLog,
  ) {
    this.state = new ServerStateModel({ busy: () => this.clients.busy, changed: () => this.refreshStatus() });
    this.edited = new EditedDocuments(output);
    this.commands = new CommandRunner(
      {
        state: () => this.state.state,
        busy: () => this.clients.busy,
        ready: (ms) => this.ready(ms),
        client: () => this.clients.client,
      },
      activity,
      output,
      () => this.refreshStatus(),
    );
    this.clients = new ClientLifecycle({
      context,
      output,
      activity,
      state: this.state,
      notifier: this.notifier,
      events: {
        settings: () => this.settings(),
        editApplied: (client, params) => this.edited.recordApplied(client, params.edit),
        applyingEdit: (params, applying) => this.applyEditEmitter.fire({ params, applying }),
        mcpCall: (p) => {
          const result: CommandResult = { ok: false, message: '', ...(p.result ?? {}) };
          this.commands.observe(p.command, p.params ?? {}, result, { via: 'mcp', client: p.client, session: p.session });
        },
        fileChanged: (p) => {
          this.output.info(`File changed outside the agent: ${p.path} (${p.kind})`);
          this.activity.addFileChanged(p);
          this.fileEmitter.fire(p);
        },
        saveDocuments: (p) => this.edited.save(p),
      },
      environmentReady: (storageDir, interp, sitePackages) => {
        this.launcher ??= new McpLauncher(storageDir, (l) => this.output.warn(l));
        this.launcher.write(interp.command, interp.args, sitePackages);
      },
      running: () => this.pushSettings(),
    });
    this.disposables.push(
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (!e.affectsConfiguration(CONFIG_SECTION)) {
          return;
        }
        if (e.affectsConfiguration(`${CONFIG_SECTION}.server.python`)) {
          this.output.info('steadyhand.server.python changed: restarting the server');
          this.notifier.clear();
          void this.restart();
        } else {
          this.pushSettings();
        }
      }),
    );
  }

  /** Calls answered by the server (or refused before reaching it), and agents' calls over MCP. */
  get onDidRunCommand(): vscode.Event<CommandEvent> {
    return this.commands.onDidRunCommand;
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
    const client = this.clients.client;
    if (client && this.state.state === 'running') {
      const settings = this.settings();
      this.output.info(`Sending settings to the server: ${JSON.stringify(settings)}`);
      void client.sendNotification(DidChangeConfigurationNotification.type, { settings: { [CONFIG_SECTION]: settings } });
    }
  }

  status(): ServerStatus {
    const init = this.clients.client?.initializeResult;
    const interp = this.clients.interpreter;
    return {
      state: this.state.state,
      editCount: this.activity.editCount,
      python: interp?.executable,
      pythonVersion: interp ? formatVersion(interp.version) : undefined,
      sitePackages: this.clients.sitePackages,
      serverName: init?.serverInfo?.name,
      serverVersion: init?.serverInfo?.version,
      commands: init?.capabilities.executeCommandProvider?.commands ?? [],
      crashRestarts: this.clients.crashRestarts,
      error: this.state.error,
    };
  }

  /** Fires the status event (e.g. after the edit count changed). */
  refreshStatus(): void {
    this.statusEmitter.fire(this.status());
  }

  ready(timeoutMs = 120_000): Promise<void> {
    return this.state.ready(timeoutMs);
  }

  start(): Promise<void> {
    return this.clients.start();
  }

  /** Stops and starts the server (see Lifecycle for restarts asked for during a start). */
  restart(): Promise<void> {
    return this.clients.restart();
  }

  /** Stops the server for good (the extension is going away). */
  stop(): Promise<void> {
    return this.clients.stop();
  }

  /** The launcher of `steadyhand mcp` (see mcp/launcher.ts), once the server's environment is ready. */
  mcpLauncher(): string | undefined {
    return this.launcher?.path;
  }

  /** Runs a server command with one parameter object; refusals and failures come back as results. */
  request(command: string, params: Record<string, unknown>, token?: vscode.CancellationToken): Promise<CommandResult> {
    return this.commands.request(command, params, token);
  }

  /** Runs a server command with the arguments of a VS Code command call (see CommandRunner.execute). */
  execute(command: string, args: unknown[], token?: vscode.CancellationToken): Promise<CommandResult> {
    return this.commands.execute(command, args, token);
  }

  dispose(): void {
    void this.stop();
    this.clients.dispose();
    this.applyEditEmitter.dispose();
    for (const d of this.disposables) {
      d.dispose();
    }
    this.edited.dispose();
    this.statusEmitter.dispose();
    this.fileEmitter.dispose();
    this.commands.dispose();
  }
}
