/**
 * Notebooks open in VS Code's notebook editor. The server syncs text documents only, so to it
 * such a notebook is a file on disk: a change it writes there is picked up by an editor that
 * holds no unsaved cells, but an editor with unsaved cells keeps its own version, and the disk
 * and the editor would disagree. The extension refuses those changes before they reach the
 * server. Pure (no `vscode` import).
 */
import type { CommandResult } from '../common/results';
import { isNotebookPath, resolveToolPath } from '../common/paths';
import { MUTATING_COMMANDS } from '../common/commands';

/** Commands that change the file named by their `file_path`: the agent's edits, and undo. */
const CHANGING: ReadonlySet<string> = new Set([...MUTATING_COMMANDS, 'steadyhand.undo']);

/**
 * The notebook a command would change, as an absolute path, when the call changes a notebook
 * (a dry run changes nothing); undefined otherwise.
 */
export function changedNotebook(
  command: string,
  params: Record<string, unknown>,
  workspaceFolder: string | undefined,
  home: string,
): string | undefined {
  if (!CHANGING.has(command) || params.dry_run === true || typeof params.file_path !== 'string') {
    return undefined;
  }
  const target = resolveToolPath(params.file_path, workspaceFolder, home);
  return isNotebookPath(target) ? target : undefined;
}

/** The refusal of a change to a notebook that has unsaved changes in the notebook editor. */
export function unsavedNotebookResult(notebookPath: string): CommandResult {
  return {
    ok: false,
    error: 'edit_rejected',
    path: notebookPath,
    message:
      `${notebookPath} is open in VS Code's notebook editor with unsaved changes, so the change was not made: ` +
      'the editor keeps its own version of an unsaved notebook, and writing the file would leave the editor and the disk ' +
      'disagreeing. Ask the user to save or revert the notebook, then read it again and retry.',
  };
}
