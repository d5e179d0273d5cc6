/**
 * Client side of `steadyhand/saveDocuments` {uris, versions?}: the server asks us to save documents
 * it has just edited (only when its `saveAfterEdit` rule allows it). We save each one and answer once
 * the disk holds the document's text: `TextDocument.save()` and `workspace.save()` may resolve before
 * the bytes are on disk, so we poll. A document whose version is no longer the one in `versions` has
 * changed since the edit (the user is typing): it is not saved, since that would save their typing.
 * Without a version for a document, the version recorded when the extension applied the server's
 * edit takes its place (see editVersions.ts).
 */
import * as vscode from 'vscode';
import { saveRefusal, type EditedVersions } from './editVersions';
import { diskMatches } from '../common/textCompare';

export interface SaveDocumentsParams {
  uris: string[];
  /** The version each document had right after the edit; a newer one is not saved. */
  versions?: Record<string, number>;
}

export interface SaveOutcome {
  uri: string;
  saved: boolean;
  error?: string;
}

export interface SaveDocumentsResult {
  /** Every URI that is now on disk with the document's text. */
  saved: string[];
  /** Per-URI outcomes, failures with a reason. */
  results: SaveOutcome[];
}

function sameUri(a: vscode.Uri, b: vscode.Uri): boolean {
  return a.toString() === b.toString() || (a.scheme === 'file' && b.scheme === 'file' && a.fsPath === b.fsPath);
}

/** The open document a URI from the server names, if any. */
export function openDocument(uri: vscode.Uri): vscode.TextDocument | undefined {
  return vscode.workspace.textDocuments.find((d) => sameUri(d.uri, uri));
}

async function waitForDisk(doc: vscode.TextDocument, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  let delay = 10;
  for (;;) {
    const text = doc.getText();
    try {
      const bytes = await vscode.workspace.fs.readFile(doc.uri);
      if (diskMatches(bytes, text)) {
        return true;
      }
    } catch {
      // not there yet
    }
    if (Date.now() >= deadline) {
      return false;
    }
    await new Promise((r) => setTimeout(r, delay));
    delay = Math.min(delay * 2, 100);
  }
}

export async function saveOne(uriString: string, timeoutMs: number, version: number | undefined, edited: EditedVersions): Promise<SaveOutcome> {
  let uri: vscode.Uri;
  try {
    uri = vscode.Uri.parse(uriString, true);
  } catch (err) {
    return { uri: uriString, saved: false, error: `invalid URI: ${String(err)}` };
  }
  const doc = openDocument(uri);
  if (!doc) {
    return { uri: uriString, saved: false, error: 'the document is not open in the editor' };
  }
  const refusal = saveRefusal(doc.version, version, edited.get(doc.uri.toString()));
  if (refusal !== undefined) {
    return { uri: uriString, saved: false, error: refusal };
  }
  if (doc.isDirty) {
    const ok = await doc.save();
    if (!ok) {
      return { uri: uriString, saved: false, error: 'the editor refused to save the document' };
    }
  }
  if (await waitForDisk(doc, timeoutMs)) {
    return { uri: uriString, saved: true };
  }
  return { uri: uriString, saved: false, error: `the file on disk did not match the document within ${timeoutMs} ms` };
}

export async function handleSaveDocuments(params: SaveDocumentsParams, edited: EditedVersions, timeoutMs = 10_000): Promise<SaveDocumentsResult> {
  const uris = Array.isArray(params?.uris) ? params.uris.filter((u): u is string => typeof u === 'string') : [];
  const versions = params?.versions && typeof params.versions === 'object' ? params.versions : {};
  const versionOf = (u: string): number | undefined => {
    const v = versions[u];
    return typeof v === 'number' ? v : undefined;
  };
  const results = await Promise.all(uris.map((u) => saveOne(u, timeoutMs, versionOf(u), edited)));
  return { saved: results.filter((r) => r.saved).map((r) => r.uri), results };
}
