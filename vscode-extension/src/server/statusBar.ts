/** The status bar item (the server's state and the agents' edit count) and the Agent changes view's badge. */
import * as vscode from 'vscode';
import type { ServerStatus } from '../api';
import type { ServerManager } from './manager';

export function statusText(s: ServerStatus): { text: string; tooltip: string; background?: vscode.ThemeColor } {
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

/** Shows the server's status in the status bar and the edit count on the view's badge, kept up to date. */
export function statusBar(server: ServerManager, tree: vscode.TreeView<unknown>): vscode.Disposable[] {
  const item = vscode.window.createStatusBarItem('steadyhand.status', vscode.StatusBarAlignment.Right, 100);
  item.name = 'Steadyhand';
  const render = (s: ServerStatus): void => {
    const t = statusText(s);
    item.text = t.text;
    item.tooltip = t.tooltip;
    item.backgroundColor = t.background;
    item.command = s.state === 'failed' ? 'steadyhand.client.showOutput' : 'steadyhand.client.showActivity';
    tree.badge = s.editCount > 0 ? { value: s.editCount, tooltip: `${s.editCount} agent edits this session` } : undefined;
  };
  render(server.status());
  item.show();
  return [item, server.onDidChangeStatus(render)];
}
