/**
 * Running the server's commands: a call waits for a server that is starting or restarting, gets
 * `server_not_running` when there is none, and every answer (and every call an agent made over
 * MCP) is logged, counted and announced (`onDidRunCommand`).
 */
import * as vscode from 'vscode';
import { ExecuteCommandRequest, type LanguageClient } from 'vscode-languageclient/node';
import type { CommandEvent, ServerState } from '../api';
import { isCommandResult, notRunningResult, requestErrorResult, type CommandResult } from '../common/results';
import { errorText } from '../common/utilities';
import type { ActivityLog } from './activity';
import { notebookRefusal } from './notebookGuard';

/** How long a call waits for a server that is starting or restarting. */
const READY_WAIT_MS = 60_000;

/** What a call needs to know of the server. */
export interface CommandTarget {
  state(): ServerState;
  /** Whether a start or restart is under way. */
  busy(): boolean;
  ready(timeoutMs: number): Promise<void>;
  client(): LanguageClient | undefined;
}

export class CommandRunner implements vscode.Disposable {
  private readonly emitter = new vscode.EventEmitter<CommandEvent>();
  readonly onDidRunCommand = this.emitter.event;

  constructor(
    private readonly target: CommandTarget,
    private readonly activity: ActivityLog,
    private readonly output: vscode.LogOutputChannel,
    /** A call was answered (the status shows the edit count). */
    private readonly answered: () => void,
  ) {}

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
    const refused = notebookRefusal(command, params);
    if (refused) {
      this.observe(command, params, refused);
      return refused;
    }
    if (this.target.state() !== 'running') {
      if (this.target.state() === 'stopped' && !this.target.busy()) {
        return notRunningResult();
      }
      try {
        await this.target.ready(READY_WAIT_MS);
      } catch (err) {
        return notRunningResult(errorText(err));
      }
    }
    const client = this.target.client();
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

  /** Logs, counts and announces an answered call (`over`: one an agent made over MCP). */
  observe(command: string, params: Record<string, unknown>, result: CommandResult, over?: Pick<CommandEvent, 'via' | 'client' | 'session'>): void {
    const ev: CommandEvent = { command, params, result, ...over };
    this.activity.addCommand(ev);
    const from = ev.via === 'mcp' ? ` (over MCP${ev.client ? ` from ${ev.client}` : ''})` : '';
    this.output.info(`${command} ${typeof params.file_path === 'string' ? params.file_path : ''}${from}: ${result.ok ? 'ok' : `refused (${result.error ?? 'error'})`}`);
    this.emitter.fire(ev);
    this.answered();
  }

  dispose(): void {
    this.emitter.dispose();
  }
}
