/** Collecting the errors VS Code reports for a file after an agent's edit. */
import * as vscode from 'vscode';
import type { DiagnosticInfo } from './format';

export function errorInfos(uri: vscode.Uri): DiagnosticInfo[] {
  return vscode.languages
    .getDiagnostics(uri)
    .filter((d) => d.severity === vscode.DiagnosticSeverity.Error)
    .map((d) => {
      const code = typeof d.code === 'object' && d.code !== null ? String(d.code.value) : d.code === undefined ? undefined : String(d.code);
      return {
        line: d.range.start.line + 1,
        character: d.range.start.character + 1,
        message: d.message,
        source: d.source,
        code,
      };
    });
}

/**
 * Records which documents' diagnostics changed from the moment it is created (before the request is
 * sent); `settle(uri)` then waits for the language features to report on the changed file: the
 * first change, then a quiet period, at most `maxWaitMs`.
 */
export class DiagnosticsTracker implements vscode.Disposable {
  private readonly seen = new Set<string>();
  private readonly listeners: Array<() => void> = [];
  private readonly sub: vscode.Disposable;

  constructor() {
    this.sub = vscode.languages.onDidChangeDiagnostics((e) => {
      for (const u of e.uris) {
        this.seen.add(u.toString());
      }
      for (const l of [...this.listeners]) {
        l();
      }
    });
  }

  /**
   * `nudge` runs at once and then every second until the first report: for documents that are
   * open but not visible, language clients that delay their didOpen until the document is shown
   * (VS Code's JSON support does) send it along with the next request for that document.
   */
  settle(uri: vscode.Uri, maxWaitMs: number, token?: vscode.CancellationToken, nudge?: () => void, quietMs = 400): Promise<void> {
    const key = uri.toString();
    const start = Date.now();
    return new Promise<void>((resolve) => {
      let quietTimer: NodeJS.Timeout | undefined;
      let nudgeTimer: NodeJS.Timeout | undefined;
      const finish = (): void => {
        clearTimeout(capTimer);
        clearTimeout(nudgeTimer);
        clearTimeout(quietTimer);
        const i = this.listeners.indexOf(onChange);
        if (i >= 0) {
          this.listeners.splice(i, 1);
        }
        cancelSub?.dispose();
        resolve();
      };
      const armQuiet = (): void => {
        clearTimeout(quietTimer);
        quietTimer = setTimeout(finish, Math.min(quietMs, Math.max(0, maxWaitMs - (Date.now() - start))));
      };
      const onChange = (): void => {
        if (this.seen.has(key)) {
          armQuiet();
        }
      };
      const capTimer = setTimeout(finish, maxWaitMs);
      const cancelSub = token?.onCancellationRequested(finish);
      this.listeners.push(onChange);
      if (this.seen.has(key)) {
        armQuiet();
      } else if (nudge) {
        const poke = (): void => {
          if (!this.seen.has(key)) {
            nudge();
            nudgeTimer = setTimeout(poke, 1000);
          }
        };
        poke();
      }
    });
  }

  dispose(): void {
    this.sub.dispose();
  }
}
