import * as path from 'node:path';
import * as vscode from 'vscode';
import type { CommandEvent, FileChangedEvent } from './api';
import { MUTATING_COMMANDS } from './tools';

export interface ActivityEntry {
  time: Date;
  kind: 'command' | 'fileChanged' | 'server';
  label: string;
  detail: string;
  path?: string;
  ok: boolean;
  /** `mcp`: the call came from an agent over MCP. */
  via?: 'mcp';
}

const MAX_ENTRIES = 500;

/** Everything agents did this session, plus files changed behind their back. */
export class ActivityLog implements vscode.Disposable {
  private readonly entries: ActivityEntry[] = [];
  private edits = 0;
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChange = this.changed.event;

  get editCount(): number {
    return this.edits;
  }

  all(): readonly ActivityEntry[] {
    return this.entries;
  }

  private push(e: ActivityEntry): void {
    this.entries.unshift(e);
    if (this.entries.length > MAX_ENTRIES) {
      this.entries.length = MAX_ENTRIES;
    }
    this.changed.fire();
  }

  addCommand(ev: CommandEvent): void {
    const verb = ev.command.replace(/^steadyhand\./, '');
    const p = typeof ev.result.path === 'string' ? ev.result.path : typeof ev.params.file_path === 'string' ? ev.params.file_path : undefined;
    // A dry run (`dry_run: true` in the result) checks an edit and changes nothing.
    const dryRun = ev.result.dry_run === true;
    if (ev.result.ok && !dryRun && MUTATING_COMMANDS.has(ev.command)) {
      this.edits += 1;
    }
    const over = ev.via === 'mcp' ? ` · over MCP${ev.client ? ` (${ev.client})` : ''}` : '';
    const status = `${verb}${dryRun ? ' (dry run)' : ''}${ev.result.ok ? '' : ` refused (${ev.result.error ?? 'error'})`}${over}`;
    this.push({
      time: new Date(),
      kind: 'command',
      label: p ? path.basename(p) : verb,
      detail: status,
      path: p,
      ok: ev.result.ok,
      via: ev.via,
    });
  }

  addFileChanged(ev: FileChangedEvent): void {
    this.push({
      time: new Date(),
      kind: 'fileChanged',
      label: path.basename(ev.path),
      detail: `changed outside the agent (${ev.kind})`,
      path: ev.path,
      ok: true,
    });
  }

  addServer(message: string, ok: boolean): void {
    this.push({ time: new Date(), kind: 'server', label: 'Server', detail: message, ok });
  }

  clear(): void {
    this.entries.length = 0;
    this.changed.fire();
  }

  dispose(): void {
    this.changed.dispose();
  }
}

export class ActivityTreeProvider implements vscode.TreeDataProvider<ActivityEntry> {
  private readonly emitter = new vscode.EventEmitter<ActivityEntry | undefined>();
  readonly onDidChangeTreeData = this.emitter.event;

  constructor(private readonly log: ActivityLog) {
    log.onDidChange(() => this.emitter.fire(undefined));
  }

  getChildren(element?: ActivityEntry): ActivityEntry[] {
    return element ? [] : [...this.log.all()];
  }

  getTreeItem(e: ActivityEntry): vscode.TreeItem {
    const item = new vscode.TreeItem(e.label, vscode.TreeItemCollapsibleState.None);
    const time = e.time.toLocaleTimeString();
    item.description = `${e.detail} · ${time}`;
    item.tooltip = e.path ? `${e.path}\n${e.detail}\n${time}` : `${e.detail}\n${time}`;
    if (e.kind === 'fileChanged') {
      item.iconPath = new vscode.ThemeIcon('warning', new vscode.ThemeColor('list.warningForeground'));
    } else if (e.kind === 'server') {
      item.iconPath = new vscode.ThemeIcon(e.ok ? 'server-process' : 'error');
    } else if (!e.ok) {
      item.iconPath = new vscode.ThemeIcon('circle-slash', new vscode.ThemeColor('list.errorForeground'));
    } else if (e.detail.startsWith('read')) {
      item.iconPath = new vscode.ThemeIcon(e.via === 'mcp' ? 'plug' : 'eye');
    } else {
      item.iconPath = new vscode.ThemeIcon('edit', new vscode.ThemeColor('charts.green'));
    }
    if (e.path) {
      item.resourceUri = vscode.Uri.file(e.path);
      item.command = { command: 'steadyhand.client.openActivityItem', title: 'Open File', arguments: [e.path] };
    }
    return item;
  }
}
