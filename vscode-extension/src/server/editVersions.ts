/**
 * Which version each document had right after the extension applied a server edit to it, and
 * whether `steadyhand/saveDocuments` may save a document. Pure (no `vscode` import).
 *
 * The server names the version to save in `versions` when the editor's didChange showing the edit
 * reached it in time. vscode-languageclient holds full-sync didChange back while the user types, so
 * sometimes it did not, and the request comes without a version: then only the version recorded
 * here tells the agent's edit from typing that followed it.
 */

/** The URIs of the documents a WorkspaceEdit (LSP shape) changes. */
export function editedUris(edit: unknown): string[] {
  const uris = new Set<string>();
  if (typeof edit !== 'object' || edit === null) {
    return [];
  }
  const { changes, documentChanges } = edit as { changes?: unknown; documentChanges?: unknown };
  if (typeof changes === 'object' && changes !== null) {
    for (const uri of Object.keys(changes)) {
      uris.add(uri);
    }
  }
  if (Array.isArray(documentChanges)) {
    for (const change of documentChanges as unknown[]) {
      // TextDocumentEdit only: create/rename/delete operations change no buffer text.
      const doc = (change as { textDocument?: { uri?: unknown } } | null)?.textDocument;
      if (typeof doc?.uri === 'string') {
        uris.add(doc.uri);
      }
    }
  }
  return [...uris];
}

export class EditedVersions {
  private readonly versions = new Map<string, number>();

  /** `uri`: the document's own URI string, as the editor spells it. */
  record(uri: string, version: number): void {
    this.versions.set(uri, version);
  }

  get(uri: string): number | undefined {
    return this.versions.get(uri);
  }

  forget(uri: string): void {
    this.versions.delete(uri);
  }
}

/**
 * Why a document must not be saved, or undefined when it may be.
 * `requested`: the version the server sent in `versions`; `recorded`: the one after the last
 * server edit the extension applied.
 */
export function saveRefusal(current: number, requested: number | undefined, recorded: number | undefined): string | undefined {
  if (requested !== undefined) {
    return current === requested
      ? undefined
      : `the document changed after the edit (version ${current}, not ${requested}): the user may be typing`;
  }
  if (recorded === undefined) {
    return 'the server gave no version and this editor applied no edit of the server to the document, so it cannot tell the edit from the user\'s typing';
  }
  return current === recorded
    ? undefined
    : `the document changed after the edit was applied (version ${current}, not ${recorded}): the user may be typing`;
}
