/**
 * Turning server results and diagnostics into the text a model reads. Pure (no `vscode` import).
 */
import type { CommandResult } from '../common/results';
import { toolForCommand } from './table';

/** A diagnostic reduced to what the model needs; `line`/`character` are 1-based. */
export interface DiagnosticInfo {
  line: number;
  character: number;
  message: string;
  source?: string;
  code?: string;
}

export function formatDiagnostic(d: DiagnosticInfo): string {
  const origin = [d.source, d.code].filter((s) => s !== undefined && s !== '').join(' ');
  return `  line ${d.line}, column ${d.character}: ${d.message.replace(/\s+/g, ' ').trim()}${origin ? ` [${origin}]` : ''}`;
}

export const MAX_DIAGNOSTICS = 20;

/** The diagnostics paragraph appended to an edit's or write's result. */
export function formatDiagnosticsReport(path: string, newErrors: DiagnosticInfo[]): string {
  if (newErrors.length === 0) {
    return `The editor reports no new errors in ${path}.`;
  }
  const shown = newErrors.slice(0, MAX_DIAGNOSTICS).map(formatDiagnostic);
  const more = newErrors.length > MAX_DIAGNOSTICS ? `\n  … and ${newErrors.length - MAX_DIAGNOSTICS} more` : '';
  const noun = newErrors.length === 1 ? 'error' : 'errors';
  const fix = newErrors.length === 1 ? 'Fix it' : 'Fix them';
  return `After this change the editor reports ${newErrors.length} new ${noun} in ${path}:\n${shown.join('\n')}${more}\n${fix} before you go on.`;
}

// The server tells a client that images come as base64 fields of the result; a language-model
// tool result here carries text only (the VS Code API this extension targets, 1.95, has no data
// parts), so those sentences would send the model looking for data it never gets.
const IMAGE_IN_DATA = " The image is in the result's `data` field (base64).";
const IMAGE_NOT_PASSED =
  ' This tool returns text only, so the image itself is not passed on to you: do not guess what it shows (ask the user if you need to know).';
const NOTEBOOK_IMAGE_DELIVERED = /^\((image\/[\w.+-]+) output, ([\d,]+) bytes: delivered in `images`\)$/gm;
const NOTEBOOK_IMAGE_WITHHELD = /^\((image\/[\w.+-]+) output, ([\d,]+) bytes, not shown; read with include_images=true to receive it\)$/gm;

/** The server's message with what it says about delivered images made true for a text-only tool. */
function textOnly(result: CommandResult): string {
  if (result.type === 'image') {
    return result.message.replace(IMAGE_IN_DATA, IMAGE_NOT_PASSED);
  }
  if (result.type === 'notebook') {
    return result.message
      .replace(NOTEBOOK_IMAGE_DELIVERED, '($1 output, $2 bytes, not shown: this tool returns text only)')
      .replace(NOTEBOOK_IMAGE_WITHHELD, '($1 output, $2 bytes, not shown: this tool returns text only)');
  }
  return result.message;
}

/** What the call asked for beyond the message. */
export interface Asked {
  /** `include_diff: true`: the whole diff, which the result carries beside the message. */
  diff?: boolean;
}

/** The diff the call asked for, when the message does not show it already ('' otherwise). */
function askedDiff(result: CommandResult, asked: Asked): string {
  const diff = result.diff;
  if (!asked.diff || typeof diff !== 'string' || diff === '' || result.message.includes(diff)) {
    return '';
  }
  return `\n\nThe diff:\n${diff}`;
}

/**
 * The text a language-model tool returns.
 * `diagnostics`: undefined when not collected (reads, failed edits, report turned off).
 * `asked`: what the input asked for that the result carries outside its message.
 */
export function formatToolResult(result: CommandResult, diagnostics?: { path: string; newErrors: DiagnosticInfo[] }, asked: Asked = {}): string {
  if (!result.ok) {
    const code = result.error ?? 'error';
    // `use` names a server command; the model knows the tools, not the commands.
    const tool = result.error === 'wrong_tool' && typeof result.use === 'string' ? toolForCommand(result.use) : undefined;
    return `Error (${code}): ${result.message}${tool ? ` Use the ${tool} tool.` : ''}`;
  }
  let text = textOnly(result) + askedDiff(result, asked);
  if (diagnostics) {
    text += `\n\n${formatDiagnosticsReport(diagnostics.path, diagnostics.newErrors)}`;
  }
  return text;
}

/**
 * Which errors are new: those in `after` not matched by one in `before` (same message, source and
 * code; lines may have moved). Multiplicity counts.
 */
export function newDiagnostics(before: DiagnosticInfo[], after: DiagnosticInfo[]): DiagnosticInfo[] {
  const key = (d: DiagnosticInfo): string => JSON.stringify([d.message, d.source ?? '', d.code ?? '']);
  const pool = new Map<string, number>();
  for (const d of before) {
    pool.set(key(d), (pool.get(key(d)) ?? 0) + 1);
  }
  const out: DiagnosticInfo[] = [];
  for (const d of after) {
    const k = key(d);
    const n = pool.get(k) ?? 0;
    if (n > 0) {
      pool.set(k, n - 1);
    } else {
      out.push(d);
    }
  }
  return out;
}

/** Short text for the write confirmation. */
export function describeWrite(path: string, content: string, exists: boolean): string {
  const lines = content === '' ? 0 : content.split('\n').length - (content.endsWith('\n') ? 1 : 0);
  const bytes = Buffer.byteLength(content, 'utf8');
  return `${exists ? 'Overwrite' : 'Create'} \`${path}\` with ${lines} line${lines === 1 ? '' : 's'} (${bytes} byte${bytes === 1 ? '' : 's'}).`;
}

/** One-line summary for the activity view and log. */
export function summarize(command: string, result: CommandResult): string {
  const verb = command.replace(/^steadyhand\./, '');
  if (result.ok) {
    return `${verb} ok`;
  }
  return `${verb} refused: ${result.error ?? 'error'}`;
}
