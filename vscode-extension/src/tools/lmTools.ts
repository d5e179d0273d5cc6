/**
 * The language-model tools: `steadyhand_read_file`, `steadyhand_edit_file`,
 * `steadyhand_multi_edit_file`, `steadyhand_write_file`, `steadyhand_edit_notebook`.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as vscode from 'vscode';
import { DiagnosticsTracker, errorInfos } from './diagnostics';
import { invalidInputResult } from '../common/results';
import { describeWrite, formatToolResult, newDiagnostics, type Asked, type DiagnosticInfo } from './format';
import type { ServerManager } from '../server/manager';
import { isNotebookPath, resolveToolPath } from '../common/paths';
import { CONFIG_SECTION } from '../common/settings';
import { TOOLS, toolInputToCommand } from './table';

type ToolInput = Record<string, unknown>;

export class ToolRunner {
  constructor(private readonly server: ServerManager) {}

  private config(): vscode.WorkspaceConfiguration {
    return vscode.workspace.getConfiguration(CONFIG_SECTION);
  }

  resolvePath(filePath: string): string {
    return resolveToolPath(filePath, vscode.workspace.workspaceFolders?.[0]?.uri.fsPath, os.homedir());
  }

  /** Runs a tool and returns the text the model gets. */
  async run(tool: string, input: unknown, token?: vscode.CancellationToken): Promise<string> {
    const session = this.config().get<string>('tools.session') || 'default';
    const mapped = toolInputToCommand(tool, input, session);
    if (!mapped.ok) {
      return formatToolResult(invalidInputResult(mapped.error));
    }
    const asked: Asked = { diff: mapped.params.include_diff === true };
    const waitMs = this.config().get<number>('tools.diagnosticsWaitMs') ?? 2500;
    const target = this.resolvePath(String(mapped.params.file_path));
    // A dry run changes nothing to report on. A notebook's diagnostics belong to its cells, and
    // opening the .ipynb as a text document would hand the server its raw JSON as an open buffer.
    const collect = mapped.spec.mutates && waitMs > 0 && mapped.params.dry_run !== true && !isNotebookPath(target);
    if (!collect) {
      return formatToolResult(await this.server.request(mapped.command, mapped.params, token), undefined, asked);
    }
    const before = errorInfos(vscode.Uri.file(target));
    const tracker = new DiagnosticsTracker();
    try {
      return await this.runAndReport(mapped.command, mapped.params, before, tracker, waitMs, asked, token);
    } finally {
      tracker.dispose();
    }
  }

  private async runAndReport(
    command: string,
    params: Record<string, unknown>,
    before: DiagnosticInfo[],
    tracker: DiagnosticsTracker,
    waitMs: number,
    asked: Asked,
    token?: vscode.CancellationToken,
  ): Promise<string> {
    const result = await this.server.request(command, params, token);
    if (!result.ok) {
      return formatToolResult(result);
    }
    const filePath = typeof result.path === 'string' ? result.path : this.resolvePath(String(params.file_path));
    if (isNotebookPath(filePath)) {
      // The real path names a notebook the given one did not (a symlink): skipped as in run().
      return formatToolResult(result, undefined, asked);
    }
    const uri = vscode.Uri.file(filePath);
    try {
      // Language features check only documents that are open, and pull-diagnostics clients (VS
      // Code's JSON support among them) only those in an editor tab: open the file in a background
      // tab (no focus change, the active editor stays) unless it is in one already.
      const inTab = vscode.window.tabGroups.all.some((g) =>
        g.tabs.some((t) => t.input instanceof vscode.TabInputText && t.input.uri.fsPath === uri.fsPath),
      );
      if (!inTab && this.config().get<boolean>('tools.openEditedFiles', true)) {
        await vscode.commands.executeCommand('vscode.open', uri, { background: true, preview: false, preserveFocus: true });
      }
      // A background tab does not load the document: load it so language features see it.
      if (!vscode.workspace.textDocuments.some((d) => d.uri.fsPath === uri.fsPath)) {
        await vscode.workspace.openTextDocument(uri);
      }
      const visible = vscode.window.visibleTextEditors.some((e) => e.document.uri.fsPath === uri.fsPath);
      // A request for the document makes delayed language clients send its didOpen.
      const nudge = visible
        ? undefined
        : (): void => {
            void Promise.resolve(vscode.commands.executeCommand('vscode.executeDocumentSymbolProvider', uri)).catch(() => undefined);
          };
      await tracker.settle(uri, waitMs, token, nudge);
    } catch (err) {
      return `${formatToolResult(result, undefined, asked)}\n\n(Could not collect the editor's diagnostics: ${String(err)})`;
    }
    const fresh = newDiagnostics(before, errorInfos(uri));
    return formatToolResult(result, { path: filePath, newErrors: fresh }, asked);
  }
}

class SteadyhandTool implements vscode.LanguageModelTool<ToolInput> {
  constructor(
    private readonly name: string,
    private readonly runner: ToolRunner,
  ) {}

  prepareInvocation(options: vscode.LanguageModelToolInvocationPrepareOptions<ToolInput>): vscode.PreparedToolInvocation {
    const input = options.input ?? {};
    const given = input.file_path ?? input.notebook_path;
    const filePath = typeof given === 'string' ? given : '';
    const shown = filePath ? vscode.workspace.asRelativePath(this.runner.resolvePath(filePath)) : 'a file';
    const dryRun = input.dry_run === true;
    switch (this.name) {
      case 'steadyhand_read_file':
        return { invocationMessage: `Reading ${shown}` };
      case 'steadyhand_edit_file':
      case 'steadyhand_multi_edit_file':
        return { invocationMessage: `${dryRun ? 'Checking an edit of' : 'Editing'} ${shown}` };
      case 'steadyhand_edit_notebook':
        return { invocationMessage: `Editing notebook ${shown}` };
      default: {
        if (dryRun) {
          return { invocationMessage: `Checking a write of ${shown}` };
        }
        const confirm = vscode.workspace.getConfiguration(CONFIG_SECTION).get<boolean>('tools.confirmWrites') ?? true;
        const abs = filePath ? this.runner.resolvePath(filePath) : '';
        const exists = abs !== '' && fs.existsSync(abs);
        const content = typeof input.content === 'string' ? input.content : '';
        return {
          invocationMessage: `${exists ? 'Overwriting' : 'Creating'} ${shown}`,
          confirmationMessages: confirm
            ? { title: exists ? 'Overwrite file?' : 'Create file?', message: new vscode.MarkdownString(describeWrite(shown, content, exists)) }
            : undefined,
        };
      }
    }
  }

  async invoke(options: vscode.LanguageModelToolInvocationOptions<ToolInput>, token: vscode.CancellationToken): Promise<vscode.LanguageModelToolResult> {
    const text = await this.runner.run(this.name, options.input, token);
    return new vscode.LanguageModelToolResult([new vscode.LanguageModelTextPart(text)]);
  }
}

export function registerTools(runner: ToolRunner, log: vscode.LogOutputChannel): vscode.Disposable[] {
  const lm = (vscode as { lm?: { registerTool?: typeof vscode.lm.registerTool } }).lm;
  if (!lm?.registerTool) {
    log.warn('This VS Code has no language-model tools API (vscode.lm.registerTool); the tools are not registered.');
    return [];
  }
  return TOOLS.map((t) => lm.registerTool!(t.tool, new SteadyhandTool(t.tool, runner)));
}

