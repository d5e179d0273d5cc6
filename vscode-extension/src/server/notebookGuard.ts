/**
 * Refuses a change to a notebook that is open in VS Code's notebook editor with unsaved changes,
 * before it reaches the server, which cannot see that editor (notebooks.ts has the rule).
 */
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { CommandResult } from '../common/results';
import { changedNotebook, unsavedNotebookResult } from './notebooks';

/** Whether the notebook at ``notebookPath`` is open in a notebook editor with unsaved changes. */
function unsavedNotebook(notebookPath: string): boolean {
  return vscode.workspace.notebookDocuments.some(
    (nb) => nb.isDirty && nb.uri.scheme === 'file' && path.resolve(nb.uri.fsPath) === path.resolve(notebookPath),
  );
}

/** The refusal of a call that would change an unsaved notebook, or undefined when it may run. */
export function notebookRefusal(command: string, params: Record<string, unknown>): CommandResult | undefined {
  const notebook = changedNotebook(command, params, vscode.workspace.workspaceFolders?.[0]?.uri.fsPath, os.homedir());
  return notebook !== undefined && unsavedNotebook(notebook) ? unsavedNotebookResult(notebook) : undefined;
}
