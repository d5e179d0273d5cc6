import * as vscode from 'vscode';
import { commandArguments, SERVER_COMMANDS } from '../common/commands';
import type { ServerManager } from './manager';

/**
 * Registers the server's commands as VS Code commands for the extension's whole life: the known
 * ones at once, any others a server advertises when it starts. Each call runs through the manager,
 * which waits for a starting or restarting server and answers `server_not_running` otherwise.
 */
export function registerServerCommands(context: vscode.ExtensionContext, server: ServerManager): void {
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
