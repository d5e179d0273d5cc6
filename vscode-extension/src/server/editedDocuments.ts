/**
 * The documents the server's edits changed, as this editor applied them: each one's version right
 * after the edit (editVersions.ts), kept until the document closes, and the answer to
 * `steadyhand/saveDocuments`, which saves a document only at that version when the server names
 * none.
 */
import * as vscode from 'vscode';
import type { LanguageClient } from 'vscode-languageclient/node';
import { EditedVersions, editedUris } from './editVersions';
import { handleSaveDocuments, openDocument, type SaveDocumentsParams, type SaveDocumentsResult } from './saveDocuments';

/** How long a save may take before its document is reported as not saved (the server waits 10 s). */
const SAVE_WAIT_MS = 8_000;

export class EditedDocuments implements vscode.Disposable {
  private readonly versions = new EditedVersions();
  private readonly closed: vscode.Disposable;

  constructor(private readonly output: vscode.LogOutputChannel) {
    this.closed = vscode.workspace.onDidCloseTextDocument((doc) => this.versions.forget(doc.uri.toString()));
  }

  /** After the server's edit is applied: each edited document's version, for a save request without one. */
  recordApplied(client: LanguageClient, edit: unknown): void {
    for (const uri of editedUris(edit)) {
      const doc = openDocument(client.protocol2CodeConverter.asUri(uri));
      if (doc) {
        this.versions.record(doc.uri.toString(), doc.version);
      }
    }
  }

  /**
   * Answers once disk has the text. Always per URI: an error reply would turn one document's
   * failure into "none saved" (the server tells the agent which change is only in the buffer,
   * and why). 8 s stays inside the server's own 10 s limit.
   */
  async save(params: SaveDocumentsParams): Promise<SaveDocumentsResult> {
    const result = await handleSaveDocuments(params, this.versions, SAVE_WAIT_MS);
    for (const r of result.results.filter((o) => !o.saved)) {
      this.output.warn(`Could not save ${r.uri} for the server: ${r.error ?? ''}`);
    }
    return result;
  }

  dispose(): void {
    this.closed.dispose();
  }
}
