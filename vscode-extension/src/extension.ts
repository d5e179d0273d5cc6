/**
 * Activation: builds the server manager and hands it to the features (the language-model tools,
 * the Agent changes view and gutter marks, the MCP set-up, the status bar), then returns the API.
 */
import * as vscode from 'vscode';
import type { CommandResult, SteadyhandApi } from './api';
import { AgentLineMarks } from './changes/gutter';
import { ChangesTreeProvider, registerChanges } from './changes/view';
import { COMMANDS } from './common/commands';
import { connectMcp } from './mcp/connect';
import { ActivityLog } from './server/activity';
import { ServerManager } from './server/manager';
import { registerServerCommands } from './server/registerCommands';
import { statusBar } from './server/statusBar';
import { registerTools, ToolRunner } from './tools/lmTools';

let manager: ServerManager | undefined;

export function activate(context: vscode.ExtensionContext): SteadyhandApi {
  const output = vscode.window.createOutputChannel('Steadyhand', { log: true });
  const activity = new ActivityLog();
  const server = new ServerManager(context, output, activity);
  manager = server;
  const runner = new ToolRunner(server);
  context.subscriptions.push(output, activity, server);

  const changes = new ChangesTreeProvider(server);
  const tree = vscode.window.createTreeView('steadyhand.activity', { treeDataProvider: changes, showCollapseAll: true });
  const marks = new AgentLineMarks(context, server);
  context.subscriptions.push(changes, tree, marks, tree.onDidChangeVisibility((e) => e.visible && changes.refreshSoon(0)));
  registerChanges(context, server, changes);

  context.subscriptions.push(...statusBar(server, tree));

  context.subscriptions.push(
    vscode.commands.registerCommand('steadyhand.client.showOutput', () => output.show(true)),
    vscode.commands.registerCommand('steadyhand.client.showActivity', async () => {
      await vscode.commands.executeCommand('steadyhand.activity.focus');
    }),
    vscode.commands.registerCommand('steadyhand.client.restartServer', () => server.restart()),
    vscode.commands.registerCommand('steadyhand.client.clearActivity', () => activity.clear()),
    vscode.commands.registerCommand('steadyhand.client.openActivityItem', async (p: string) => {
      try {
        await vscode.window.showTextDocument(vscode.Uri.file(p), { preview: true });
      } catch (err) {
        void vscode.window.showWarningMessage(`Cannot open ${p}: ${String(err)}`);
      }
    }),
    vscode.commands.registerCommand('steadyhand.client.connectMcp', (hostId?: unknown) => connectMcp(server, hostId)),
    ...registerTools(runner, output),
  );
  registerServerCommands(context, server);

  void server.start();

  const call = (command: string, params: object, token?: vscode.CancellationToken): Promise<CommandResult> =>
    server.request(command, params as Record<string, unknown>, token);

  const api: SteadyhandApi = {
    apiVersion: 1,
    ready: (timeoutMs) => server.ready(timeoutMs),
    status: () => server.status(),
    read: (params, token) => call(COMMANDS.read, params, token),
    edit: (params, token) => call(COMMANDS.edit, params, token),
    write: (params, token) => call(COMMANDS.write, params, token),
    command: (command, params, token) => call(command, params, token),
    forkSession: (session, parent = 'default') => call(COMMANDS.sessionFork, { session, parent }),
    closeSession: (session) => call(COMMANDS.sessionClose, { session }),
    invokeTool: (name, input, token) => runner.run(name, input, token),
    agentChangedLines: (uri) => marks.linesOf(uri),
    onDidChangeFile: server.onDidChangeFile,
    onDidRunCommand: server.onDidRunCommand,
    onDidChangeStatus: server.onDidChangeStatus,
  };
  return api;
}

export async function deactivate(): Promise<void> {
  await manager?.stop();
  manager = undefined;
}
