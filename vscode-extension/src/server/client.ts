/**
 * Building the language client: how the server process is started (stdio, the private
 * environment), what the client announces (saving on request), and how it handles what the
 * server sends (edits, save requests, file-changed notifications). The manager (server.ts)
 * owns the client's life: it decides on restarts and keeps the state.
 */
import * as readline from 'node:readline';
import type * as vscode from 'vscode';
import {
  CancellationToken,
  DidChangeWatchedFilesNotification,
  ErrorAction,
  ExecuteCommandRequest,
  LanguageClient,
  ResponseError,
  RevealOutputChannelOn,
  TransportKind,
  type ApplyWorkspaceEditParams,
  type CloseHandlerResult,
  type DynamicFeature,
  type ErrorHandler,
  type LanguageClientOptions,
  type ServerOptions,
  type StateChangeEvent,
  type StaticFeature,
} from 'vscode-languageclient/node';
import type { FileChangedEvent } from '../api';
import type { CommandResult } from '../common/results';
import type { ResolvedInterpreter } from '../common/python/interpreter';
import { pythonEnv } from '../common/python/environment';
import type { SaveDocumentsParams, SaveDocumentsResult } from './saveDocuments';
import { ServerLogParser } from '../common/log/serverLog';
import { CONFIG_SECTION, type ServerSettings } from '../common/settings';
import { errorText } from '../common/utilities';

export const FILE_CHANGED = 'steadyhand/fileChanged';
/** A tool call an agent made over MCP (`steadyhand mcp` attached to this window's server). */
export const MCP_CALL = 'steadyhand/mcpCall';

/** What `steadyhand/mcpCall` carries. */
export interface McpCallEvent {
  command: string;
  tool?: string;
  params?: Record<string, unknown>;
  result?: Partial<CommandResult>;
  client?: string;
  session?: string;
}
export const SAVE_DOCUMENTS = 'steadyhand/saveDocuments';

/**
 * vscode-languageclient pops up its own error messages for start and initialize failures (some
 * forced, whatever `revealOutputChannelOn` says). The extension shows one clear notification of
 * its own instead, so the client's errors only go to the log.
 */
class SteadyhandLanguageClient extends LanguageClient {
  override error(message: string, data?: unknown, _showNotification?: boolean | 'force'): void {
    super.error(message, data, false);
  }

  /**
   * The client's own command feature registers the server's commands while a server runs and
   * drops them whenever it stops (a crash, a restart, a server that cannot start): a call then
   * fails with "command not found". The extension registers them for its whole life instead
   * (see registerServerCommands in extension.ts), so this feature is left out.
   */
  override registerFeature(feature: StaticFeature | DynamicFeature<unknown>): void {
    if ('registrationType' in feature && feature.registrationType.method === ExecuteCommandRequest.method) {
      return;
    }
    super.registerFeature(feature);
  }
}

/** What the client asks of its owner. */
export interface ClientHost {
  readonly output: vscode.LogOutputChannel;
  /** The settings sent to the server (initialization options, configuration requests). */
  settings(): ServerSettings;
  /** The server process ended: restart it or not. */
  closed(client: LanguageClient): CloseHandlerResult;
  /** The server's edit was applied (`applied: true`). */
  editApplied(client: LanguageClient, params: ApplyWorkspaceEditParams): void;
  /** The server's edit is being applied (true), or that is over (false). */
  applyingEdit?(params: ApplyWorkspaceEditParams, applying: boolean): void;
  fileChanged(event: FileChangedEvent): void;
  /** A tool call came over MCP and was answered. */
  mcpCall(event: McpCallEvent): void;
  saveDocuments(params: SaveDocumentsParams): Promise<SaveDocumentsResult>;
  stateChanged(client: LanguageClient, event: StateChangeEvent): void;
}

export interface ClientSetup {
  interpreter: ResolvedInterpreter;
  /** The private environment's site-packages (undefined: the interpreter's own package). */
  sitePackages: string | undefined;
  /** The server's working folder. */
  cwd: string;
  /** The client's error count past which it gives up on a broken connection. */
  maxRestarts: number;
}

/** A client that starts `python -m steadyhand serve` over stdio, wired to `host`. */
export function createClient(setup: ClientSetup, host: ClientHost): LanguageClient {
  const interp = setup.interpreter;
  const serverOptions: ServerOptions = {
    command: interp.command,
    args: [...interp.args, '-m', 'steadyhand', 'serve'],
    transport: TransportKind.stdio,
    options: { env: pythonEnv(setup.sitePackages), cwd: setup.cwd },
  };
  const errorHandler: ErrorHandler = {
    error: (_error, _message, count) => {
      if ((count ?? 0) <= 3) {
        return { action: ErrorAction.Continue, handled: true };
      }
      return { action: ErrorAction.Shutdown, handled: true };
    },
    closed: () => host.closed(client),
  };
  const clientOptions: LanguageClientOptions = {
    // The server needs every open file's buffer (the buffer is the truth for open documents).
    documentSelector: [{ scheme: 'file' }],
    outputChannel: host.output,
    revealOutputChannelOn: RevealOutputChannelOn.Never,
    initializationOptions: () => host.settings(),
    errorHandler,
    initializationFailedHandler: (err) => {
      host.output.error(`The server failed to initialize: ${err instanceof Error ? err.message : String(err)}`);
      return false;
    },
    connectionOptions: { maxRestartCount: setup.maxRestarts },
    textSynchronization: { delayOpenNotifications: false },
    diagnosticCollectionName: 'steadyhand',
    stdioOptions: {
      stdout: (input, channel) => {
        readline.createInterface({ input, crlfDelay: Infinity, terminal: false }).on('line', (l) => channel.info(l));
      },
      stderr: (input, channel) => {
        const parser = new ServerLogParser();
        readline.createInterface({ input, crlfDelay: Infinity, terminal: false }).on('line', (l) => {
          const { level, text } = parser.line(l);
          channel[level](text);
        });
      },
    },
    middleware: {
      workspace: {
        handleApplyEdit: async (params, next) => {
          host.applyingEdit?.(params, true);
          let result: Awaited<ReturnType<typeof next>>;
          try {
            // The client passes no token here; its own handler ignores it.
            result = await next(params, CancellationToken.None);
          } finally {
            host.applyingEdit?.(params, false);
          }
          if (!(result instanceof ResponseError) && result.applied) {
            host.editApplied(client, params);
            // Full-sync didChange is held back while the user types; sent late, the server has
            // no version to name in its save request. Any notification sends it now: it carries
            // the buffer as it is, as the held-back one would have.
            await client.sendNotification(DidChangeWatchedFilesNotification.type, { changes: [] }).catch((err: unknown) => {
              host.output.warn(`Could not send the edited documents' changes at once: ${errorText(err)}`);
            });
          }
          return result;
        },
        configuration: async (params, token, next) => {
          const values: unknown = await next(params, token);
          if (!Array.isArray(values)) {
            return values as ResponseError<void>;
          }
          const list = values as unknown[];
          return params.items.map((item, i): unknown => (item.section === CONFIG_SECTION ? host.settings() : list[i]));
        },
      },
    },
  };
  const client = new SteadyhandLanguageClient('steadyhand', 'Steadyhand', serverOptions, clientOptions);
  const steadyhandCapabilities: StaticFeature = {
    fillClientCapabilities: (caps) => {
      const experimental = (caps.experimental ?? {}) as Record<string, unknown>;
      const mine = (experimental.steadyhand ?? {}) as Record<string, unknown>;
      // renameKeepsUnsaved: a RenameFile moves a dirty document's working copy to the new name,
      // still dirty, and writes none of its typing (the disk file is renamed as it is).
      experimental.steadyhand = { ...mine, saveDocuments: true, renameKeepsUnsaved: true };
      caps.experimental = experimental;
    },
    initialize: () => undefined,
    getState: () => ({ kind: 'static' }),
    clear: () => undefined,
  };
  client.registerFeature(steadyhandCapabilities);
  client.onNotification(MCP_CALL, (p: McpCallEvent) => host.mcpCall(p));
  client.onNotification(FILE_CHANGED, (p: FileChangedEvent) => host.fileChanged(p));
  client.onRequest(SAVE_DOCUMENTS, (p: SaveDocumentsParams) => host.saveDocuments(p));
  client.onDidChangeState((e) => host.stateChanged(client, e));
  return client;
}
