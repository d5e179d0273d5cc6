/**
 * The "Agent changes" view's model and the gutter marks' arithmetic. Pure (no `vscode` import).
 *
 * `steadyhand.changes` answers the recorded changes, newest first, each with the checkpoint of
 * its session it comes after; the view shows them by session, then by checkpoint.
 */

/** One change as `steadyhand.changes` lists it. */
export interface ChangeItem {
  id: string;
  time: string;
  session: string;
  tool: string;
  path: string;
  kind?: string;
  added: number;
  removed: number;
  current: boolean;
  restorable: boolean;
  checkpoint?: string | null;
}

export interface CheckpointItem {
  id: string;
  session: string;
  label: string;
  time: string;
}

export interface CheckpointGroup {
  /** Undefined: the changes made before the session's first listed checkpoint. */
  checkpoint: CheckpointItem | undefined;
  changes: ChangeItem[];
}

export interface SessionGroup {
  session: string;
  /** Newest first. With no checkpoint in the session: one group, `checkpoint` undefined. */
  groups: CheckpointGroup[];
  count: number;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The change items of a `steadyhand.changes` result (malformed ones left out). */
export function changeItems(result: Record<string, unknown>): ChangeItem[] {
  const raw = Array.isArray(result.changes) ? (result.changes as unknown[]) : [];
  return raw.filter(
    (c): c is ChangeItem =>
      isObject(c) && typeof c.id === 'string' && typeof c.path === 'string' && typeof c.session === 'string' && typeof c.tool === 'string',
  );
}

export function checkpointItems(result: Record<string, unknown>): CheckpointItem[] {
  const raw = Array.isArray(result.checkpoints) ? (result.checkpoints as unknown[]) : [];
  return raw.filter((c): c is CheckpointItem => isObject(c) && typeof c.id === 'string' && typeof c.session === 'string');
}

/** Changes (newest first) by session (the session changed last first), then by checkpoint. */
export function groupChanges(changes: readonly ChangeItem[], checkpoints: readonly CheckpointItem[]): SessionGroup[] {
  const sessions = new Map<string, ChangeItem[]>();
  for (const c of changes) {
    const list = sessions.get(c.session) ?? [];
    list.push(c);
    sessions.set(c.session, list);
  }
  const out: SessionGroup[] = [];
  for (const [session, items] of sessions) {
    const cps = checkpoints.filter((cp) => cp.session === session);
    if (cps.length === 0) {
      out.push({ session, groups: [{ checkpoint: undefined, changes: items }], count: items.length });
      continue;
    }
    const groups: CheckpointGroup[] = cps.map((cp) => ({ checkpoint: cp, changes: items.filter((c) => c.checkpoint === cp.id) }));
    const known = new Set(cps.map((cp) => cp.id));
    const before = items.filter((c) => !c.checkpoint || !known.has(c.checkpoint));
    if (before.length > 0) {
      groups.push({ checkpoint: undefined, changes: before });
    }
    out.push({ session, groups, count: items.length });
  }
  return out;
}

/** `+3/-1`, or what a creation or deletion did. */
export function changeStat(c: ChangeItem): string {
  if (c.kind === 'create') {
    return `created +${c.added}`;
  }
  if (c.kind === 'delete') {
    return `deleted -${c.removed}`;
  }
  return `+${c.added}/-${c.removed}`;
}

/** `HH:MM:SS` of an ISO 8601 time (as written, in the server's offset), or the text itself. */
export function clockOf(iso: string): string {
  const m = /T(\d\d:\d\d:\d\d)/.exec(iso);
  return m?.[1] ?? iso;
}

/** The row's description: tool, +A/-R, time. */
export function changeDescription(c: ChangeItem): string {
  const notes = c.restorable ? '' : ' · not restorable';
  return `${c.tool} ${changeStat(c)} · ${clockOf(c.time)}${notes}`;
}

export function checkpointLabel(cp: CheckpointItem): string {
  return cp.label ? `Checkpoint “${cp.label}”` : `Checkpoint ${cp.id}`;
}

/** The distinct files of some changes, in the order first seen. */
export function changedFiles(changes: readonly ChangeItem[]): string[] {
  return [...new Set(changes.map((c) => c.path))];
}

/** The 0-based lines of the new text a unified diff adds or changes (its `+` lines). */
export function addedLines(diff: string): number[] {
  const out: number[] = [];
  let line = -1;
  for (const l of diff.split('\n')) {
    const hunk = /^@@ -\d+(?:,\d+)? \+(\d+)(?:,\d+)? @@/.exec(l);
    if (hunk) {
      line = Number(hunk[1]) - 1;
      continue;
    }
    if (line < 0 || l.startsWith('+++') || l.startsWith('---')) {
      continue;
    }
    if (l.startsWith('+')) {
      out.push(line);
      line += 1;
    } else if (l.startsWith(' ')) {
      line += 1;
    }
  }
  return out;
}

/** A text change as an editor reports it: lines `start..end` (0-based, inclusive) replaced by `text`. */
export interface LineChange {
  startLine: number;
  startCharacter: number;
  endLine: number;
  endCharacter: number;
  text: string;
}

/**
 * The marks (0-based lines) after `change`. By an agent (`byAgent`): the lines it wrote are
 * marked. By anyone else (the user typing, an undo): the lines it touched lose their mark. Lines
 * after it move with it; a line the change only moved keeps its mark.
 */
export function moveMarks(marks: ReadonlySet<number>, change: LineChange, byAgent: boolean): Set<number> {
  const { startLine, startCharacter, endLine, endCharacter, text } = change;
  const newlines = text.split('\n').length - 1;
  const delta = newlines - (endLine - startLine);
  // The old last line is left whole, only moved: the change ends at its start and puts
  // nothing before it on its line.
  const lastKept = endCharacter === 0 && (newlines > 0 ? text.endsWith('\n') : startCharacter === 0 && text === '');
  const out = new Set<number>();
  for (const m of marks) {
    if (m < startLine) {
      out.add(m);
    } else if (m > endLine || (m === endLine && lastKept)) {
      out.add(m + delta);
    }
  }
  if (byAgent) {
    const last = startLine + newlines - (lastKept ? 1 : 0);
    for (let l = startLine; l <= last; l++) {
      out.add(l);
    }
  }
  return out;
}

/**
 * "over MCP" (with the host's name when known) for a session of an agent that came over MCP:
 * one `steadyhand mcp` seen calling under it, or a name of the form `steadyhand mcp` gives its
 * connections (`mcp-…`, sub-agent sessions `mcp-…/…`); undefined for any other session.
 */
export function overMcp(session: string, seen: ReadonlyMap<string, string>): string | undefined {
  const root = session.split('/')[0] ?? session;
  if (!seen.has(session) && !seen.has(root) && !/^mcp-[0-9a-f]+$/.test(root)) {
    return undefined;
  }
  const client = seen.get(session) || seen.get(root);
  return client ? `over MCP (${client})` : 'over MCP';
}
