import * as path from 'node:path';
import * as vscode from 'vscode';
import type { CommandEvent, FileChangedEvent } from '../api';
import { MUTATING_COMMANDS } from '../common/commands';

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

/**
 * Everything agents did this session, plus files changed behind their back: the status bar's
 * count of agent edits. (The "Agent changes" view shows the server's recorded changes.)
 */
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
