/**
 * The "Agent changes" view: the server's recorded changes by session and by checkpoint. A row
 * opens the change in VS Code's diff editor (texts from `steadyhand.change`, served read-only
 * under the `steadyhand-change:` scheme); rows take a change back (`steadyhand.undo` by id) or
 * open its file; checkpoint rows rewind the session to them after a confirmation.
 */
import * as path from 'node:path';
import * as vscode from 'vscode';
import {
  changeDescription,
  changedFiles,
  changeItems,
  checkpointItems,
  checkpointLabel,
  clockOf,
  groupChanges,
  overMcp,
  type ChangeItem,
  type CheckpointItem,
  type SessionGroup,
} from './model';
import type { CommandResult } from '../common/results';
import type { ServerManager } from '../server/manager';

export const CHANGE_SCHEME = 'steadyhand-change';
export const SHOW_CHANGE = 'steadyhand.client.showChange';
export const TAKE_BACK_CHANGE = 'steadyhand.client.takeBackChange';
export const OPEN_CHANGE_FILE = 'steadyhand.client.openChangeFile';
export const REWIND_TO_CHECKPOINT = 'steadyhand.client.rewindToCheckpoint';
export const REFRESH_CHANGES = 'steadyhand.client.refreshChanges';

/** Changes listed in the view (the newest). */
const VIEW_LIMIT = 200;
/** Server commands after which the list is read again. */
const CHANGING = new Set([
  'steadyhand.edit',
  'steadyhand.write',
  'steadyhand.multiEdit',
  'steadyhand.notebookEdit',
  'steadyhand.undo',
  'steadyhand.rewind',
  'steadyhand.checkpoint',
]);

type Node =
  | { kind: 'session'; group: SessionGroup }
  | { kind: 'checkpoint'; session: string; checkpoint: CheckpointItem | undefined; changes: ChangeItem[] }
  | { kind: 'change'; change: ChangeItem }
  | { kind: 'note'; text: string };

function relative(p: string): string {
  const folder = vscode.workspace.getWorkspaceFolder(vscode.Uri.file(p));
  return folder ? path.relative(folder.uri.fsPath, p) : p;
}

/** The id a command was given: the id itself, or a change row of the view. */
function changeIdOf(arg: unknown): string | undefined {
  if (typeof arg === 'string') {
    return arg;
  }
  if (typeof arg === 'object' && arg !== null) {
    const node = arg as { kind?: unknown; change?: { id?: unknown }; id?: unknown };
    if (node.kind === 'change' && typeof node.change?.id === 'string') {
      return node.change.id;
    }
    if (typeof node.id === 'string') {
      return node.id;
    }
  }
  return undefined;
}

/** The file of a change row, or a path given as it is. */
function changePathOf(arg: unknown): string | undefined {
  if (typeof arg === 'string') {
    return arg;
  }
  const node = arg as { kind?: unknown; change?: { path?: unknown } } | undefined;
  return node?.kind === 'change' && typeof node.change?.path === 'string' ? node.change.path : undefined;
}

export class ChangesTreeProvider implements vscode.TreeDataProvider<Node>, vscode.Disposable {
  private readonly emitter = new vscode.EventEmitter<Node | undefined>();
  readonly onDidChangeTreeData = this.emitter.event;
  private groups: SessionGroup[] = [];
  private note: string | undefined = 'Loading…';
  private timer: NodeJS.Timeout | undefined;
  private loading: Promise<void> | undefined;
  private readonly disposables: vscode.Disposable[] = [];
  /** Sessions of agents that came over MCP, and their host's name (when it gave one). */
  private readonly mcpClients = new Map<string, string>();

  constructor(private readonly server: ServerManager) {
    this.disposables.push(
      server.onDidRunCommand((ev) => {
        if (ev.via === 'mcp' && ev.session) {
          this.mcpClients.set(ev.session, ev.client ?? '');
        }
        if (ev.result.ok && CHANGING.has(ev.command) && ev.result.dry_run !== true) {
          this.refreshSoon();
        }
      }),
      server.onDidChangeStatus((s) => {
        if (s.state === 'running') {
          this.refreshSoon();
        } else if (s.state === 'failed') {
          this.show([], `The Steadyhand server is not running: ${s.error ?? 'see the log'}`);
        }
      }),
      server.onDidChangeFile(() => this.refreshSoon()),
    );
  }

  /** Read the list again shortly (several changes in a row: once). */
  refreshSoon(delayMs = 300): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.refresh(), delayMs);
  }

  /** Read the list from the server now. */
  refresh(): Promise<void> {
    this.loading ??= this.load().finally(() => (this.loading = undefined));
    return this.loading;
  }

  private async load(): Promise<void> {
    if (this.server.status().state !== 'running') {
      return;
    }
    const r = await this.server.request('steadyhand.changes', { limit: VIEW_LIMIT });
    if (!r.ok) {
      const off = r.error === 'no_history' ? 'File history is off (the steadyhand.history setting), so no change is recorded.' : r.message;
      this.show([], off);
      return;
    }
    const items = changeItems(r);
    this.show(groupChanges(items, checkpointItems(r)), items.length === 0 ? 'No agent change recorded yet.' : undefined);
  }

  private show(groups: SessionGroup[], note: string | undefined): void {
    this.groups = groups;
    this.note = note;
    this.emitter.fire(undefined);
  }

  getChildren(node?: Node): Node[] {
    if (!node) {
      if (this.groups.length === 0) {
        return this.note ? [{ kind: 'note', text: this.note }] : [];
      }
      return this.groups.map((group) => ({ kind: 'session', group }));
    }
    if (node.kind === 'session') {
      const groups = node.group.groups;
      const only = groups.length === 1 ? groups[0] : undefined;
      if (only && only.checkpoint === undefined) {
        return only.changes.map((change) => ({ kind: 'change', change }));
      }
      return groups.map((g) => ({ kind: 'checkpoint', session: node.group.session, checkpoint: g.checkpoint, changes: g.changes }));
    }
    if (node.kind === 'checkpoint') {
      return node.changes.map((change) => ({ kind: 'change', change }));
    }
    return [];
  }

  getTreeItem(node: Node): vscode.TreeItem {
    const Collapsed = vscode.TreeItemCollapsibleState;
    switch (node.kind) {
      case 'note': {
        const item = new vscode.TreeItem(node.text, Collapsed.None);
        item.iconPath = new vscode.ThemeIcon('info');
        return item;
      }
      case 'session': {
        const item = new vscode.TreeItem(`Session ${node.group.session}`, Collapsed.Expanded);
        const over = overMcp(node.group.session, this.mcpClients);
        item.description = `${node.group.count} change${node.group.count === 1 ? '' : 's'}${over ? ` · ${over}` : ''}`;
        item.iconPath = new vscode.ThemeIcon(over ? 'plug' : 'account');
        item.contextValue = 'steadyhand.session';
        return item;
      }
      case 'checkpoint': {
        const cp = node.checkpoint;
        const item = new vscode.TreeItem(cp ? checkpointLabel(cp) : 'Before the first checkpoint', Collapsed.Expanded);
        item.description = cp ? `${clockOf(cp.time)} · ${node.changes.length} after it` : `${node.changes.length}`;
        item.iconPath = new vscode.ThemeIcon(cp ? 'milestone' : 'history');
        item.contextValue = cp ? 'steadyhand.checkpoint' : 'steadyhand.checkpointNone';
        item.tooltip = cp ? `${cp.id} of session ${cp.session}, set at ${cp.time}` : undefined;
        return item;
      }
      case 'change': {
        const c = node.change;
        const item = new vscode.TreeItem(path.basename(c.path), Collapsed.None);
        item.id = `change:${c.id}`;
        item.description = changeDescription(c);
        item.resourceUri = vscode.Uri.file(c.path);
        const md = new vscode.MarkdownString();
        md.appendText(`${relative(c.path)}\n${c.tool} by session ${c.session} at ${c.time} (+${c.added} / -${c.removed})\n`);
        md.appendText(c.current ? 'The file is still what this change left.' : 'The file changed since.');
        if (!c.restorable) {
          md.appendText('\nIts texts are no longer all kept: it cannot be taken back on its own.');
        }
        item.tooltip = md;
        item.contextValue = c.restorable ? 'steadyhand.change' : 'steadyhand.change.kept';
        item.command = { command: SHOW_CHANGE, title: 'Show Change', arguments: [c.id] };
        return item;
      }
    }
  }

  /** The listed change items (for a quick pick). */
  items(): ChangeItem[] {
    return this.groups.flatMap((s) => s.groups.flatMap((g) => g.changes));
  }

  dispose(): void {
    clearTimeout(this.timer);
    this.emitter.dispose();
    for (const d of this.disposables) {
      d.dispose();
    }
  }
}

/** Serves the texts before and after a change, read-only, for the diff editor. */
export class ChangeContentProvider implements vscode.TextDocumentContentProvider {
  private readonly cache = new Map<string, Promise<CommandResult>>();

  constructor(private readonly server: ServerManager) {}

  /** `steadyhand.change` for ``id`` (kept: a change's texts never change). */
  fetch(id: string): Promise<CommandResult> {
    let p = this.cache.get(id);
    if (!p) {
      p = this.server.request('steadyhand.change', { id });
      this.cache.set(id, p);
      void p.then((r) => {
        if (!r.ok) {
          this.cache.delete(id); // a server that was not running, say: ask again next time
        }
      });
    }
    return p;
  }

  static uri(change: { id: string; path: string }, side: 'before' | 'after'): vscode.Uri {
    return vscode.Uri.from({ scheme: CHANGE_SCHEME, path: change.path, query: `id=${encodeURIComponent(change.id)}&side=${side}` });
  }

  async provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
    const q = new URLSearchParams(uri.query);
    const id = q.get('id') ?? '';
    const r = await this.fetch(id);
    if (!r.ok) {
      return '';
    }
    const text = q.get('side') === 'before' ? r.before : r.after;
    return typeof text === 'string' ? text : '';
  }
}

async function pickChange(tree: ChangesTreeProvider, placeHolder: string): Promise<string | undefined> {
  await tree.refresh();
  const picked = await vscode.window.showQuickPick(
    tree.items().map((c) => ({ label: path.basename(c.path), description: changeDescription(c), detail: relative(c.path), id: c.id })),
    { placeHolder },
  );
  return picked?.id;
}

/** The first sentence of a message, for a notification. */
function firstSentence(text: string): string {
  const line = text.split('\n')[0] ?? text;
  return line.length > 400 ? `${line.slice(0, 400)}…` : line;
}

export function registerChanges(context: vscode.ExtensionContext, server: ServerManager, tree: ChangesTreeProvider): void {
  const content = new ChangeContentProvider(server);

  const showChange = async (arg?: unknown): Promise<CommandResult | undefined> => {
    const id = changeIdOf(arg) ?? (await pickChange(tree, 'The change to show'));
    if (!id) {
      return undefined;
    }
    const r = await content.fetch(id);
    if (!r.ok) {
      void vscode.window.showWarningMessage(firstSentence(r.message));
      return r;
    }
    const change = { id, path: String(r.path) };
    const title = `${path.basename(change.path)} (${String(r.tool)} by ${String(r.session)} at ${clockOf(String(r.time))})`;
    await vscode.commands.executeCommand(
      'vscode.diff',
      ChangeContentProvider.uri(change, 'before'),
      ChangeContentProvider.uri(change, 'after'),
      title,
      { preview: true },
    );
    return r;
  };

  const takeBack = async (arg?: unknown): Promise<CommandResult | undefined> => {
    const id = changeIdOf(arg) ?? (await pickChange(tree, 'The change to take back'));
    if (!id) {
      return undefined;
    }
    const r = await server.request('steadyhand.undo', { id });
    if (r.ok) {
      vscode.window.setStatusBarMessage(`Steadyhand: ${firstSentence(r.message)}`, 8000);
    } else {
      // Answered at once; "Take back anyway" (where force applies) runs when chosen.
      const anyway = r.can_force === true ? ['Take back anyway'] : [];
      void vscode.window.showWarningMessage(firstSentence(r.message), ...anyway).then(async (picked) => {
        if (!picked) {
          return;
        }
        const forced = await server.request('steadyhand.undo', { id, force: true });
        const show = forced.ok ? vscode.window.showInformationMessage : vscode.window.showErrorMessage;
        void show(firstSentence(forced.message));
      });
    }
    return r;
  };

  const openFile = async (arg?: unknown): Promise<void> => {
    const p = changePathOf(arg);
    if (!p) {
      return;
    }
    try {
      await vscode.window.showTextDocument(vscode.Uri.file(p), { preview: false });
    } catch (err) {
      void vscode.window.showWarningMessage(`Cannot open ${p}: ${String(err)}`);
    }
  };

  const rewind = async (arg?: unknown): Promise<CommandResult | undefined> => {
    const node = arg as { kind?: unknown; checkpoint?: CheckpointItem } | undefined;
    const cp = node?.kind === 'checkpoint' ? node.checkpoint : undefined;
    if (!cp) {
      return undefined;
    }
    const since = await server.request('steadyhand.changes', { session: cp.session, since: cp.id, limit: 1000 });
    if (!since.ok) {
      void vscode.window.showWarningMessage(firstSentence(since.message));
      return since;
    }
    const files = changedFiles(changeItems(since).filter((c) => c.session === cp.session)).map(relative);
    if (files.length === 0) {
      void vscode.window.showInformationMessage(`Session ${cp.session} changed no file since ${checkpointLabel(cp)}.`);
      return since;
    }
    const shown = files.slice(0, 30).map((f) => `• ${f}`);
    if (files.length > shown.length) {
      shown.push(`… and ${files.length - shown.length} more`);
    }
    const picked = await vscode.window.showWarningMessage(
      `Rewind session ${cp.session} to ${checkpointLabel(cp)}?`,
      {
        modal: true,
        detail: `These files go back to what they held at the checkpoint (${files.length}):\n${shown.join('\n')}\n\nA file someone else changed since is skipped. The rewind can be undone file by file.`,
      },
      'Rewind',
    );
    if (picked !== 'Rewind') {
      return undefined;
    }
    const r = await server.request('steadyhand.rewind', { session: cp.session, checkpoint: cp.id });
    const show = r.ok ? vscode.window.showInformationMessage : vscode.window.showErrorMessage;
    void show(firstSentence(r.message));
    return r;
  };

  context.subscriptions.push(
    vscode.workspace.registerTextDocumentContentProvider(CHANGE_SCHEME, content),
    vscode.commands.registerCommand(SHOW_CHANGE, showChange),
    vscode.commands.registerCommand(TAKE_BACK_CHANGE, takeBack),
    vscode.commands.registerCommand(OPEN_CHANGE_FILE, openFile),
    vscode.commands.registerCommand(REWIND_TO_CHECKPOINT, rewind),
    vscode.commands.registerCommand(REFRESH_CHANGES, () => tree.refresh()),
  );
}
