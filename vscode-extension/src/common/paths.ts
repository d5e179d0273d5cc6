/** Path helpers shared by the tools. Pure (no `vscode` import). */
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Resolves a tool's `file_path` the way the server does, for choosing which document's
 * diagnostics to watch: absolute paths as they are, `~/…` under the home folder, `file://` URIs,
 * anything else relative to the first workspace folder.
 */
export function resolveToolPath(filePath: string, workspaceFolder: string | undefined, home: string): string {
  if (filePath.startsWith('file://')) {
    try {
      return fileURLToPath(filePath);
    } catch {
      return filePath;
    }
  }
  if (filePath === '~') {
    return home;
  }
  if (filePath.startsWith('~/') || filePath.startsWith('~\\')) {
    return path.join(home, filePath.slice(2));
  }
  if (path.isAbsolute(filePath)) {
    return path.normalize(filePath);
  }
  return path.resolve(workspaceFolder ?? process.cwd(), filePath);
}

/** Whether a path names a Jupyter notebook (the server's test, by extension). */
export function isNotebookPath(filePath: string): boolean {
  return filePath.toLowerCase().endsWith('.ipynb');
}
