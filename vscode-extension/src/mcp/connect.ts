import * as vscode from 'vscode';
import type { ServerManager } from '../server/manager';
import { hostSnippets } from './launcher';

/**
 * "Connect an agent over MCP": the set-up of `steadyhand mcp` for the chosen host (Claude Code,
 * Codex CLI, …) with the extension's own launcher, copied to the clipboard. `hostId` skips the
 * pick (for scripts and tests). Answers what was copied.
 */
export async function connectMcp(server: ServerManager, hostId: unknown): Promise<{ host: string; text: string; launcher: string; copied: boolean } | undefined> {
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
