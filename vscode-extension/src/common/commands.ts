/** The server's commands as the extension knows them. Pure (no `vscode` import). */
import { SERVER_COMMAND_NAMES } from '../tools/generated';

export const COMMANDS = {
  read: 'steadyhand.read',
  edit: 'steadyhand.edit',
  write: 'steadyhand.write',
  multiEdit: 'steadyhand.multiEdit',
  notebookEdit: 'steadyhand.notebookEdit',
  sessionFork: 'steadyhand.session.fork',
  sessionClose: 'steadyhand.session.close',
} as const;

/**
 * Every command the server advertises (generated from the server's tool source). The extension
 * registers each one as a VS Code command for its whole life (and package.json contributes them),
 * so that a call made while the server starts, restarts after a crash or cannot run waits for it
 * or gets a `server_not_running` result, instead of failing with "command not found". Commands a
 * newer server advertises beyond these are registered when it starts.
 */
export const SERVER_COMMANDS: readonly string[] = SERVER_COMMAND_NAMES;

/**
 * The `arguments` of `workspace/executeCommand` for a VS Code command call: the call's own
 * arguments (the server takes one parameter object), without trailing `undefined`s, which JSON
 * would turn into nulls.
 */
export function commandArguments(args: readonly unknown[]): unknown[] {
  const out = [...args];
  while (out.length > 0 && out[out.length - 1] === undefined) {
    out.pop();
  }
  return out;
}

/** Server commands whose successful result changes a file (counted as agent edits). */
export const MUTATING_COMMANDS: ReadonlySet<string> = new Set([COMMANDS.edit, COMMANDS.write, COMMANDS.multiEdit, COMMANDS.notebookEdit]);

