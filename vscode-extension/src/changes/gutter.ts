/**
 * A gutter mark on the lines agents changed in this window's session. Edits the server applies
 * to open documents mark the lines they write (an undo or a rewind puts text back, so it marks
 * nothing); a change written to a file that was not open marks the lines its diff adds once the
 * file is opened. Typing on a marked line clears its mark; `steadyhand.changes.gutterMarks`
 * turns the marks off.
 */
import * as vscode from 'vscode';
import type { ApplyWorkspaceEditParams } from 'vscode-languageclient/node';
import { addedLines, moveMarks } from './model';
import { CONFIG_SECTION } from '../common/settings';
import type { ServerManager } from '../server/manager';

const SETTING = 'changes.gutterMarks';
/** Tools whose edits put earlier text back: their lines are not marked as agent changes. */
const PUTS_BACK = new Set(['undo', 'rewind']);
const MARKING_COMMANDS = new Set(['steadyhand.edit', 'steadyhand.write', 'steadyhand.multiEdit']);

/** The tool named in an edit's label (`Agent edit: app.py`). */
function toolOf(params: ApplyWorkspaceEditParams): string | undefined {
  return /^Agent (\w+)/.exec(params.label ?? '')?.[1];
}

export class AgentLineMarks implements vscode.Disposable {
  private readonly decoration: vscode.TextEditorDecorationType;
  /** Open documents (URI string) → marked lines (0-based). */
  private readonly marks = new Map<string, Set<number>>();
  /** Files written while not open (fsPath) → the lines to mark when they are opened. */
  private readonly pending = new Map<string, number[]>();
  /** Edits the server is applying now, by the tool that made them. */
  private applying: string[] = [];
  private enabled: boolean;
  private readonly disposables: vscode.Disposable[] = [];

  constructor(context: vscode.ExtensionContext, server: ServerManager) {
    this.decoration = vscode.window.createTextEditorDecorationType({
      gutterIconPath: vscode.Uri.joinPath(context.extensionUri, 'media', 'agent-line.svg'),
      gutterIconSize: 'contain',
      overviewRulerColor: new vscode.ThemeColor('editorOverviewRuler.modifiedForeground'),
      overviewRulerLane: vscode.OverviewRulerLane.Left,
    });
    this.enabled = this.readSetting();
    this.disposables.push(
      this.decoration,
      server.onApplyingEdit(({ params, applying }) => {
        const tool = toolOf(params) ?? 'edit';
        if (applying) {
          this.applying.push(tool);
        } else {
          const i = this.applying.indexOf(tool);
          if (i >= 0) {
            this.applying.splice(i, 1);
          }
        }
      }),
      server.onDidRunCommand((ev) => {
        const r = ev.result;
        if (r.ok && r.via === 'disk' && MARKING_COMMANDS.has(ev.command) && typeof r.path === 'string' && typeof r.diff === 'string') {
          this.markWritten(r.path, addedLines(r.diff));
        }
      }),
      vscode.workspace.onDidChangeTextDocument((e) => this.changed(e)),
      vscode.workspace.onDidOpenTextDocument((doc) => this.opened(doc)),
      vscode.workspace.onDidCloseTextDocument((doc) => this.marks.delete(doc.uri.toString())),
      vscode.window.onDidChangeVisibleTextEditors(() => this.render()),
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (e.affectsConfiguration(`${CONFIG_SECTION}.${SETTING}`)) {
          this.enabled = this.readSetting();
          if (!this.enabled) {
            this.marks.clear();
            this.pending.clear();
          }
          this.render();
        }
      }),
    );
  }

  private readSetting(): boolean {
    return vscode.workspace.getConfiguration(CONFIG_SECTION).get<boolean>(SETTING, true);
  }

  /** The marked lines of a document (0-based), for tests and the API. */
  linesOf(uri: vscode.Uri): number[] {
    return [...(this.marks.get(uri.toString()) ?? [])].sort((a, b) => a - b);
  }

  private markWritten(fsPath: string, lines: number[]): void {
    if (!this.enabled || lines.length === 0) {
      return;
    }
    const doc = vscode.workspace.textDocuments.find((d) => d.uri.scheme === 'file' && d.uri.fsPath === fsPath);
    if (doc) {
      const set = this.marks.get(doc.uri.toString()) ?? new Set<number>();
      lines.forEach((l) => set.add(l));
      this.marks.set(doc.uri.toString(), set);
      this.render();
    } else {
      this.pending.set(fsPath, lines);
    }
  }

  private opened(doc: vscode.TextDocument): void {
    const lines = doc.uri.scheme === 'file' ? this.pending.get(doc.uri.fsPath) : undefined;
    if (lines) {
      this.pending.delete(doc.uri.fsPath);
      this.marks.set(doc.uri.toString(), new Set(lines.filter((l) => l < doc.lineCount)));
      this.render();
    }
  }

  private changed(e: vscode.TextDocumentChangeEvent): void {
    if (!this.enabled || e.document.uri.scheme !== 'file' || e.contentChanges.length === 0) {
      return;
    }
    const key = e.document.uri.toString();
    const tool = this.applying[this.applying.length - 1];
    const byAgent = tool !== undefined && !PUTS_BACK.has(tool);
    let marks: Set<number> = this.marks.get(key) ?? new Set<number>();
    if (marks.size === 0 && !byAgent) {
      return;
    }
    // Each change's range is in the text before the event: apply them bottom up.
    const changes = [...e.contentChanges].sort((a, b) => b.range.start.compareTo(a.range.start));
    for (const c of changes) {
      marks = moveMarks(
        marks,
        {
          startLine: c.range.start.line,
          startCharacter: c.range.start.character,
          endLine: c.range.end.line,
          endCharacter: c.range.end.character,
          text: c.text.replace(/\r\n?/g, '\n'),
        },
        byAgent,
      );
    }
    this.marks.set(key, marks);
    this.render();
  }

  private render(): void {
    for (const editor of vscode.window.visibleTextEditors) {
      const lines = this.enabled ? this.marks.get(editor.document.uri.toString()) : undefined;
      editor.setDecorations(
        this.decoration,
        [...(lines ?? [])].filter((l) => l < editor.document.lineCount).map((l) => new vscode.Range(l, 0, l, 0)),
      );
    }
  }

  dispose(): void {
    for (const d of this.disposables) {
      d.dispose();
    }
  }
}
