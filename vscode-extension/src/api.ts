/**
 * The API that `activate` returns, for extensions that depend on Steadyhand
 * (`"extensionDependencies": ["steadyhand.steadyhand"]`):
 *
 *   const api = vscode.extensions.getExtension<SteadyhandApi>('steadyhand.steadyhand')!.exports;
 *   await api.ready();
 *   const r = await api.read({ file_path: '/abs/path.py' });
 *
 * Parameters and results are the server's (see docs/protocol.md): snake_case parameters, results
 * `{ ok, message, error?, path, ... }`. Refusals are results with `ok: false`, never exceptions.
 */
import type { CancellationToken, Event, Uri } from 'vscode';
import type { CommandResult } from './common/results';

export type { CommandResult } from './common/results';

export interface ReadParams {
  file_path: string;
  offset?: number;
  limit?: number;
  /** PDFs: "3", "1-5", "7-" or "1,4-6". */
  pages?: string;
  /** Notebooks: image outputs as base64 in the result's `images`. */
  include_images?: boolean;
  session?: string;
}

export interface EditParams {
  file_path: string;
  old_string: string;
  new_string: string;
  replace_all?: boolean;
  /** Refuse (`count_mismatch`) unless exactly this many places match. */
  expected_replacements?: number;
  /** Run every check and return the diff, changing nothing. */
  dry_run?: boolean;
  session?: string;
}

export interface WriteParams {
  file_path: string;
  content: string;
  dry_run?: boolean;
  session?: string;
}

export interface ReadResult extends CommandResult {
  type?: 'text' | 'file_unchanged' | 'notebook' | 'image' | 'pdf';
  start_line?: number;
  num_lines?: number;
  total_lines?: number;
}

export interface EditResult extends CommandResult {
  replacements?: number;
  matched?: string;
  diff?: string;
}

export interface WriteResult extends CommandResult {
  lines_before?: number;
  lines_after?: number;
  added?: number;
  removed?: number;
  diff?: string;
}

export interface FileChangedEvent {
  path: string;
  kind: string;
}

export interface CommandEvent {
  command: string;
  params: Record<string, unknown>;
  result: CommandResult;
  /** `mcp`: an agent's call that came over MCP (`steadyhand mcp` attached to this window's server). */
  via?: 'mcp';
  /** For calls over MCP: the MCP host's name (`clientInfo.name`) and the call's session. */
  client?: string;
  session?: string;
}

export type ServerState = 'starting' | 'running' | 'stopped' | 'failed';

export interface ServerStatus {
  state: ServerState;
  /** Successful agent edits/writes since the window opened. */
  editCount: number;
  /** Interpreter running the server. */
  python?: string;
  pythonVersion?: string;
  /** Folder the server package is imported from (the private environment), if bundled. */
  sitePackages?: string;
  /** `serverInfo` from the server's initialize result. */
  serverName?: string;
  serverVersion?: string;
  /** Commands the server advertises (auto-registered as VS Code commands). */
  commands: string[];
  /** How often the server was restarted after a crash in this window. */
  crashRestarts: number;
  /** Why the server is not running, when it failed. */
  error?: string;
}

export interface SteadyhandApi {
  readonly apiVersion: 1;
  /** Resolves once the server runs; rejects with the reason if it cannot start. */
  ready(timeoutMs?: number): Promise<void>;
  status(): ServerStatus;
  read(params: ReadParams, token?: CancellationToken): Promise<ReadResult>;
  edit(params: EditParams, token?: CancellationToken): Promise<EditResult>;
  write(params: WriteParams, token?: CancellationToken): Promise<WriteResult>;
  /** Any server command (e.g. `steadyhand.multiEdit`) with its one parameter object. */
  command(command: string, params: Record<string, unknown>, token?: CancellationToken): Promise<CommandResult>;
  forkSession(session: string, parent?: string): Promise<CommandResult>;
  closeSession(session: string): Promise<CommandResult>;
  /**
   * Runs a language-model tool's handler directly (`steadyhand_read_file`, `steadyhand_edit_file`,
   * `steadyhand_multi_edit_file`, `steadyhand_write_file`, `steadyhand_edit_notebook`) and returns
   * the text the model would get, diagnostics included.
   * For agents that do not go through `vscode.lm.invokeTool`.
   */
  invokeTool(name: string, input: unknown, token?: CancellationToken): Promise<string>;
  /**
   * The lines (0-based) of an open document that carry the gutter mark of an agent change made
   * in this window's session (empty when `steadyhand.changes.gutterMarks` is off).
   */
  agentChangedLines(uri: Uri): number[];
  readonly onDidChangeFile: Event<FileChangedEvent>;
  readonly onDidRunCommand: Event<CommandEvent>;
  readonly onDidChangeStatus: Event<ServerStatus>;
}
