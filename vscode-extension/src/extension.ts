import * as vscode from 'vscode';
import { ActivityLog } from './activity';
import type { CommandResult, ServerStatus, SteadyhandApi } from './api';
import { ChangesTreeProvider, registerChanges } from './changes';
import { AgentLineMarks } from './gutter';
import { registerTools, ToolRunner } from './lmTools';
import { hostSnippets } from './mcp';
import { ServerManager } from './server';
import { COMMANDS, commandArguments, SERVER_COMMANDS } from './tools';

let manager: ServerManager | undefined;

function statusText(s: ServerStatus): { text: string; tooltip: string; background?: vscode.ThemeColor } {
  const edits = `${s.editCount} agent edit${s.editCount === 1 ? '' : 's'}`;
  switch (s.state) {
    case 'running':
      return {
        text: `$(shield) Steadyhand · ${s.editCount}`,
        tooltip: `Steadyhand server running (${s.serverVersion ?? ''}, Python ${s.pythonVersion ?? '?'})\n${edits} this session\nClick to show the agent changes.`,
      };
    case 'starting':
      return { text: '$(sync~spin) Steadyhand', tooltip: 'Steadyhand server starting…' };
    case 'failed':
      return {
        text: '$(error) Steadyhand',
        tooltip: `Steadyhand server not running: ${s.error ?? 'unknown error'}\nClick to show the log.`,
        background: new vscode.ThemeColor('statusBarItem.errorBackground'),
      };
    default:
      return { text: '$(circle-slash) Steadyhand', tooltip: 'Steadyhand server stopped.' };
  }
}

/**
 * Registers the server's commands as VS Code commands for the extension's whole life: the known
 * ones at once, any others a server advertises when it starts. Each call runs through the manager,
 * which waits for a starting or restarting server and answers `server_not_running` otherwise.
 */
function registerServerCommands(context: vscode.ExtensionContext, server: ServerManager): void {
  const registered = new Set<string>();
  const register = (command: string): void => {
    if (registered.has(command)) {
      return;
    }
    registered.add(command);
    context.subscriptions.push(
      vscode.commands.registerCommand(command, (...args: unknown[]) => server.execute(command, commandArguments(args))),
    );
  };
  SERVER_COMMANDS.forEach(register);
  context.subscriptions.push(
    server.onDidChangeStatus((s) => {
      for (const command of s.commands) {
        register(command);
      }
    }),
  );
}

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

  const item = vscode.window.createStatusBarItem('steadyhand.status', vscode.StatusBarAlignment.Right, 100);
  item.name = 'Steadyhand';
  const renderStatus = (s: ServerStatus): void => {
    const t = statusText(s);
    item.text = t.text;
    item.tooltip = t.tooltip;
    item.backgroundColor = t.background;
    item.command = s.state === 'failed' ? 'steadyhand.client.showOutput' : 'steadyhand.client.showActivity';
    tree.badge = s.editCount > 0 ? { value: s.editCount, tooltip: `${s.editCount} agent edits this session` } : undefined;
  };
  renderStatus(server.status());
  item.show();
  context.subscriptions.push(item, server.onDidChangeStatus(renderStatus));

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

/**
 * "Connect an agent over MCP": the set-up of `steadyhand mcp` for the chosen host (Claude Code,
 * Codex CLI, …) with the extension's own launcher, copied to the clipboard. `hostId` skips the
 * pick (for scripts and tests). Answers what was copied.
 */
async function connectMcp(server: ServerManager, hostId: unknown): Promise<{ host: string; text: string; launcher: string; copied: boolean } | undefined> {
  try {
    await server.ready(120_000);
  } catch {
    // answered below: no launcher without a server environment
  }
  const launcher = server.mcpLauncher();
  if (!launcher) {
    void vscode.window.showErrorMessage('Steadyhand: the server is not running, so agents cannot be connected yet. See the Steadyhand log.');
    return undefined;
  }
  const snippets = hostSnippets(launcher, process.platform);
  let pick = typeof hostId === 'string' ? snippets.find((s) => s.id === hostId) : undefined;
  if (!pick) {
    const chosen = await vscode.window.showQuickPick(
      snippets.map((s) => ({ label: s.label, description: s.where, detail: s.text.split('\n')[0], snippet: s })),
      { title: 'Steadyhand: Connect an agent over MCP', placeHolder: 'Which agent do you use?', matchOnDetail: true },
    );
    if (!chosen) {
      return undefined;
    }
    pick = chosen.snippet;
  }
  // A browser may hold the clipboard back (no focus, no permission): never wait on it long.
  const copied = await Promise.race([
    Promise.resolve(vscode.env.clipboard.writeText(pick.text)).then(
      () => true,
      (err: unknown) => {
        server.output.warn(`Could not copy to the clipboard: ${String(err)}`);
        return false;
      },
    ),
    new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 3_000)),
  ]);
  server.output.info(`MCP set-up for ${pick.label} (${pick.where}):\n${pick.text}`);
  const shown = pick;
  void vscode.window
    .showInformationMessage(
      `Steadyhand: ${copied ? 'copied' : 'could not copy'} the ${shown.label} set-up${copied ? ' to the clipboard' : ' (it is in the log)'} (${shown.where}): ${shown.text}`,
      'Show',
    )
    .then(async (choice) => {
      if (choice === 'Show') {
        const language = shown.text.startsWith('{') ? 'json' : shown.id === 'codex' ? 'toml' : 'shellscript';
        await vscode.window.showTextDocument(await vscode.workspace.openTextDocument({ language, content: shown.text }));
      }
    });
  return { host: shown.id, text: shown.text, launcher, copied };
}

export async function deactivate(): Promise<void> {
  await manager?.stop();
  manager = undefined;
}
