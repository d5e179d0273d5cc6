// Steadyhand end-to-end scenario, run inside a real VS Code (code-server) extension host.
// Every step records what it saw; the pytest side asserts on result.json.
'use strict';
const vscode = require('vscode');
const fs = require('fs');
const path = require('path');

const OUT = process.env.STEADYHAND_E2E_DIR;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function waitFor(fn, timeoutMs, stepMs = 100) {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) return v;
    await sleep(stepMs);
  }
}

function withTimeout(promise, ms, what) {
  return Promise.race([promise, sleep(ms).then(() => { throw new Error(`${what} timed out after ${ms} ms`); })]);
}

function textOf(result) {
  return result.content.map((p) => (p instanceof vscode.LanguageModelTextPart || typeof p.value === 'string' ? p.value : JSON.stringify(p))).join('');
}

const disk = (p) => (fs.existsSync(p) ? fs.readFileSync(p, 'utf8') : null);

// A VS Code command call, with a thrown error (say "command not found") recorded as a value.
async function tryCommand(command, ...args) {
  try {
    return await vscode.commands.executeCommand(command, ...args);
  } catch (err) {
    return { threw: String(err) };
  }
}

async function activate(context) {
  if (!OUT) return;
  const result = { started: new Date().toISOString(), steps: {}, errors: [], log: [] };
  const write = () => fs.writeFileSync(path.join(OUT, 'result.json.tmp'), JSON.stringify(result, null, 2));
  const log = (m) => { result.log.push(`${new Date().toISOString()} ${m}`); write(); };
  const step = async (name, fn) => {
    log(`step ${name}`);
    try {
      result.steps[name] = await fn();
    } catch (err) {
      result.steps[name] = { exception: String(err && err.stack || err) };
      result.errors.push(`${name}: ${err}`);
    }
    write();
  };
  const screenshot = async (name) => {
    fs.writeFileSync(path.join(OUT, `shot-${name}.request`), '');
    const ok = await waitFor(() => fs.existsSync(path.join(OUT, `shot-${name}.png`)), 20000, 200);
    log(`screenshot ${name}: ${ok ? 'taken' : 'not taken'}`);
  };

  // The notification toasts shown now, as the browser script reads them from the page.
  const queryToasts = async (name) => {
    const file = path.join(OUT, `query-${name}.json`);
    fs.writeFileSync(path.join(OUT, `query-${name}.request`), '');
    await waitFor(() => fs.existsSync(file), 20000, 200);
    return fs.existsSync(file) ? JSON.parse(fs.readFileSync(file, 'utf8')) : null;
  };

  const ws = vscode.workspace.workspaceFolders[0].uri.fsPath;
  const P = (...a) => path.join(ws, ...a);
  let api;
  // Tool invocation: the real VS Code path (vscode.lm.invokeTool) first; outside a chat request a
  // build may refuse or block on a confirmation, then we call the same handler through the API.
  const invoke = async (name, input) => {
    let lmError = null;
    if (vscode.lm && vscode.lm.invokeTool) {
      try {
        const r = await withTimeout(Promise.resolve(vscode.lm.invokeTool(name, { input, toolInvocationToken: undefined })), 60000, `vscode.lm.invokeTool(${name})`);
        return { via: 'vscode.lm.invokeTool', text: textOf(r) };
      } catch (err) {
        lmError = String(err);
      }
    }
    return { via: 'api.invokeTool', lmError, text: await api.invokeTool(name, input) };
  };

  await step('activate', async () => {
    const ext = vscode.extensions.getExtension('steadyhand.steadyhand');
    if (!ext) throw new Error('steadyhand.steadyhand is not installed');
    const a0 = Date.now();
    api = await ext.activate();
    const activateMs = Date.now() - a0;
    const t0 = Date.now();
    await api.ready(240000);
    const commands = await vscode.commands.getCommands(true);
    return {
      activateMs,
      readyMs: Date.now() - t0,
      status: api.status(),
      globalStorage: path.join(path.dirname(context.globalStorageUri.fsPath), 'steadyhand.steadyhand'),
      extensionPath: ext.extensionPath,
      registered: ['steadyhand.read', 'steadyhand.edit', 'steadyhand.write'].filter((c) => commands.includes(c)),
      tools: (vscode.lm && vscode.lm.tools ? vscode.lm.tools : []).map((t) => t.name).filter((n) => n.startsWith('steadyhand_')),
      vscodeVersion: vscode.version,
    };
  });
  if (!api) { result.done = true; write(); fs.renameSync(path.join(OUT, 'result.json.tmp'), path.join(OUT, 'result.json')); return; }

  const fileChanges = [];
  api.onDidChangeFile((e) => fileChanges.push(e));

  // 1. steadyhand.read through the auto-registered VS Code command.
  await step('commandRead', async () => {
    const r = await vscode.commands.executeCommand('steadyhand.read', { file_path: P('hello.txt') });
    return { result: r };
  });

  // 2. An edit through the LM tool lands in the open buffer as one undo step and reaches disk.
  const app = P('src', 'app.py');
  const original = disk(app);
  let editor;
  await step('toolEditOpenBuffer', async () => {
    const doc = await vscode.workspace.openTextDocument(app);
    editor = await vscode.window.showTextDocument(doc, { preview: false });
    await vscode.commands.executeCommand('workbench.action.closeAuxiliaryBar').then(undefined, () => undefined);
    await vscode.commands.executeCommand('steadyhand.client.showActivity');
    await sleep(500);
    const read = await invoke('steadyhand_read_file', { file_path: app });
    await vscode.window.showTextDocument(doc, { preview: false });
    await screenshot('before-edit');
    const dirtyBefore = doc.isDirty;
    const edit = await invoke('steadyhand_edit_file', {
      file_path: app,
      old_string: 'def greet(name):\n    return "Hello, " + name',
      new_string: 'def greet(name: str) -> str:\n    return f"Hello, {name}!"',
    });
    const bufferAfter = doc.getText();
    const dirtyAfterEdit = doc.isDirty;
    const diskAfter = await waitFor(() => (disk(app) || '').includes('f"Hello, {name}!"') && disk(app), 10000);
    await screenshot('agent-edit');
    // One undo step: a single undo restores the exact text from before the edit, redo re-applies.
    await vscode.window.showTextDocument(doc, { preview: false });
    await vscode.commands.executeCommand('undo');
    const afterUndo = doc.getText();
    await vscode.commands.executeCommand('redo');
    const afterRedo = doc.getText();
    if (doc.isDirty) await doc.save();
    await waitFor(() => disk(app) === doc.getText(), 5000);
    return {
      readVia: read.via, readText: read.text.slice(0, 2000), lmError: edit.lmError || read.lmError || null,
      via: edit.via, text: edit.text, dirtyBefore,
      bufferHasEdit: bufferAfter.includes('f"Hello, {name}!"'),
      diskHasEdit: !!diskAfter, dirtyAfterEdit,
      undoRestoresOriginal: afterUndo === original, redoRestoresEdit: afterRedo === bufferAfter,
      afterUndo: afterUndo.slice(0, 500),
    };
  });

  // 3. The user types without saving; the agent's edit is refused as stale; the typing is intact.
  // 4. Then (record refreshed by the stale diff) an accepted edit does not save the user's typing.
  await step('staleAndUnsaved', async () => {
    const doc = await vscode.workspace.openTextDocument(app);
    editor = await vscode.window.showTextDocument(doc, { preview: false });
    await invoke('steadyhand_read_file', { file_path: app });
    const diskBefore = disk(app);
    // Type like a user: cursor at the start of line 1, then the `type` command.
    editor.selection = new vscode.Selection(0, 0, 0, 0);
    await vscode.commands.executeCommand('type', { text: '# typed by the user, not saved\n' });
    await sleep(300);
    const typed = doc.getText().startsWith('# typed by the user, not saved\n');
    const stale = await invoke('steadyhand_edit_file', {
      file_path: app,
      old_string: 'TIMEOUT = 30',
      new_string: 'TIMEOUT = 60',
    });
    await sleep(300);
    const afterStale = {
      text: stale.text,
      bufferKeepsTyping: doc.getText().startsWith('# typed by the user, not saved\n'),
      bufferUnchangedByAgent: doc.getText().includes('TIMEOUT = 30'),
      dirty: doc.isDirty,
      diskUnchanged: disk(app) === diskBefore,
    };
    const retry = await invoke('steadyhand_edit_file', {
      file_path: app,
      old_string: 'TIMEOUT = 30',
      new_string: 'TIMEOUT = 60',
    });
    await sleep(1500);
    const afterRetry = {
      text: retry.text,
      bufferHasAgentEdit: doc.getText().includes('TIMEOUT = 60'),
      bufferKeepsTyping: doc.getText().startsWith('# typed by the user, not saved\n'),
      dirty: doc.isDirty,
      diskHasTyping: (disk(app) || '').includes('# typed by the user'),
      diskText: disk(app),
    };
    await screenshot('unsaved-kept');
    // Leave the editor clean for the next steps: revert the user's typing.
    await vscode.commands.executeCommand('workbench.action.files.revert');
    return { typed, afterStale, afterRetry };
  });

  // 5. A write creates a new file in a new folder.
  await step('writeNewFolder', async () => {
    const target = P('generated', 'deep', 'report.md');
    const w = await invoke('steadyhand_write_file', { file_path: target, content: '# Report\n\nWritten by the agent.\n' });
    const content = await waitFor(() => disk(target), 5000);
    return { via: w.via, lmError: w.lmError || null, text: w.text, exists: fs.existsSync(target), content };
  });

  // 6. An edit that breaks a JSON file returns the diagnostics of VS Code's JSON support.
  await step('jsonDiagnostics', async () => {
    const cfg = P('config.json');
    await invoke('steadyhand_read_file', { file_path: cfg });
    const t0 = Date.now();
    const e = await invoke('steadyhand_edit_file', { file_path: cfg, old_string: '"retries": 3,', new_string: '"retries": 3' });
    const toolMs = Date.now() - t0;
    const tabs = vscode.window.tabGroups.all.flatMap((g) => g.tabs.map((t) => `${t.label}${t.isActive ? '*' : ''}`));
    const docOpen = vscode.workspace.textDocuments.some((d) => d.uri.fsPath === cfg);
    const uri = vscode.Uri.file(cfg);
    const seen = await waitFor(() => vscode.languages.getDiagnostics(uri).length > 0, 15000);
    const diagnosticsAfterMs = Date.now() - t0;
    const diags = vscode.languages.getDiagnostics(uri).map((d) => ({ message: d.message, source: d.source, severity: d.severity, line: d.range.start.line + 1 }));
    await vscode.window.showTextDocument(uri, { preview: false });
    await screenshot('json-diagnostics');
    return { via: e.via, text: e.text, toolMs, tabs, docOpen, diagnosticsSeen: !!seen, diagnosticsAfterMs, diagnostics: diags, disk: disk(cfg) };
  });

  // 7. A file changed behind the agent's back is reported (steadyhand/fileChanged).
  await step('fileChanged', async () => {
    const h = P('hello.txt');
    fs.writeFileSync(h, 'changed behind the agent\n');
    const seen = await waitFor(() => fileChanges.find((e) => e.path === h || e.path.endsWith('hello.txt')), 10000);
    const again = await vscode.commands.executeCommand('steadyhand.edit', { file_path: h, old_string: 'Hello', new_string: 'Hi' });
    return { event: seen || null, all: fileChanges.slice(0, 10), editAfterExternalChange: again };
  });

  // 8. The tools beyond read/edit/write: a notebook written, read and changed cell by cell (and
  // never opened as a raw-JSON text document), several edits to one file in one call, a dry run.
  await step('moreTools', async () => {
    const nb = P('analysis.ipynb');
    const notebook = {
      cells: [{ cell_type: 'code', execution_count: null, id: 'c1', metadata: {}, outputs: [], source: ['x = 1\n'] }],
      metadata: { language_info: { name: 'python' } },
      nbformat: 4,
      nbformat_minor: 5,
    };
    const nbWrite = await invoke('steadyhand_write_file', { file_path: nb, content: JSON.stringify(notebook, null, 1) + '\n' });
    const nbTextDocAfterWrite = vscode.workspace.textDocuments.some((d) => d.uri.fsPath === nb);
    const nbRead = await invoke('steadyhand_read_file', { file_path: nb });
    const nbEdit = await invoke('steadyhand_edit_notebook', { file_path: nb, cell_id: 'c1', new_source: 'x = 2\n' });
    const nbTextDocAfterEdit = vscode.workspace.textDocuments.some((d) => d.uri.fsPath === nb);
    const notes = P('notes.txt');
    await invoke('steadyhand_write_file', { file_path: notes, content: 'alpha\nbeta\ngamma\n' });
    const dryRun = await invoke('steadyhand_edit_file', { file_path: notes, old_string: 'alpha', new_string: 'ALPHA', dry_run: true });
    const afterDryRun = disk(notes);
    const multi = await invoke('steadyhand_multi_edit_file', {
      file_path: notes,
      edits: [{ old_string: 'alpha', new_string: 'one' }, { old_string: 'gamma', new_string: 'three', expected_replacements: 1 }],
    });
    const notesDisk = await waitFor(() => (disk(notes) || '').includes('three') && disk(notes), 5000);
    return {
      nbWrite: nbWrite.text, nbTextDocAfterWrite, nbRead: nbRead.text.slice(0, 2000), nbEdit: nbEdit.text,
      nbTextDocAfterEdit, nbDisk: disk(nb),
      dryRun: dryRun.text, afterDryRun, multi: multi.text, notesDisk: notesDisk || disk(notes),
    };
  });

  // 8b. A notebook open in the notebook editor (which the server cannot see): with unsaved cells
  // an agent's change to it is refused and the file and the editor stay as they are; once the
  // user reverts, the change reaches the disk and the editor shows it.
  await step('notebookEditor', async () => {
    const nbPath = P('open.ipynb');
    const notebook = {
      cells: [{ cell_type: 'code', execution_count: null, id: 'c1', metadata: {}, outputs: [], source: ['a = 1\n'] }],
      metadata: { language_info: { name: 'python' } },
      nbformat: 4,
      nbformat_minor: 5,
    };
    fs.writeFileSync(nbPath, JSON.stringify(notebook, null, 1) + '\n');
    const nbDoc = await vscode.workspace.openNotebookDocument(vscode.Uri.file(nbPath));
    await vscode.window.showNotebookDocument(nbDoc, { preview: false });
    const typed = new vscode.WorkspaceEdit();
    typed.set(nbDoc.uri, [vscode.NotebookEdit.insertCells(1, [new vscode.NotebookCellData(vscode.NotebookCellKind.Code, 'b = 2', 'python')])]);
    const userEdit = await vscode.workspace.applyEdit(typed);
    const dirty = nbDoc.isDirty;
    const before = disk(nbPath);
    const read = await vscode.commands.executeCommand('steadyhand.read', { file_path: nbPath });
    const change = { file_path: nbPath, cell_id: 'c1', new_source: 'a = 10\n' };
    const refused = await vscode.commands.executeCommand('steadyhand.notebookEdit', change);
    const toolRefused = await invoke('steadyhand_edit_notebook', change);
    const dryRun = await vscode.commands.executeCommand('steadyhand.edit', { file_path: nbPath, old_string: 'a = 1', new_string: 'a = 3', dry_run: true });
    const unchanged = disk(nbPath) === before;
    const cellsWhileDirty = nbDoc.getCells().map((c) => c.document.getText());
    const stillDirty = nbDoc.isDirty;
    await vscode.window.showNotebookDocument(nbDoc, { preview: false });
    await vscode.commands.executeCommand('workbench.action.files.revert');
    const clean = await waitFor(() => !nbDoc.isDirty, 5000);
    const accepted = await vscode.commands.executeCommand('steadyhand.notebookEdit', change);
    const shown = await waitFor(() => nbDoc.getCells().some((c) => c.document.getText().trimEnd() === 'a = 10'), 10000);
    return {
      userEdit, dirty, read: { ok: read.ok }, refused, toolRefused: toolRefused.text, dryRun: { ok: dryRun.ok, error: dryRun.error },
      unchanged, cellsWhileDirty, stillDirty, clean: !!clean, accepted: { ok: accepted.ok, error: accepted.error, message: accepted.message },
      shown: !!shown, cellsAfter: nbDoc.getCells().map((c) => c.document.getText()), diskAfter: disk(nbPath),
    };
  });

  // 8c. An agent over MCP: "Connect an agent over MCP" gives the command line; an MCP client
  // (the official Python SDK's) runs it in the workspace, and the MCP server it starts
  // attaches to this window's server. The file is open with unsaved typing: the agent reads
  // the buffer, its edit lands in the buffer, the typing is never saved, and the activity
  // view lists the calls as coming over MCP.
  await step('mcp', async () => {
    const connect = await withTimeout(Promise.resolve(vscode.commands.executeCommand('steadyhand.client.connectMcp', 'command')), 60000, 'connectMcp');
    log(`mcp: launcher ${connect && connect.launcher}`);
    const clipboard = await withTimeout(Promise.resolve(vscode.env.clipboard.readText()), 3000, 'clipboard').catch((err) => `error: ${err}`);
    const f = P('mcp.txt');
    fs.writeFileSync(f, 'alpha\nbeta\n');
    const doc = await vscode.workspace.openTextDocument(f);
    const ed = await vscode.window.showTextDocument(doc, { preview: false });
    ed.selection = new vscode.Selection(2, 0, 2, 0);
    await vscode.commands.executeCommand('type', { text: 'typed, not saved\n' });
    await sleep(300);
    const events = [];
    const sub = api.onDidRunCommand((e) => { if (e.via === 'mcp') events.push(e); });
    const out = path.join(OUT, 'mcp-agent.json');
    const python = process.env.STEADYHAND_E2E_PYTHON;
    const script = process.env.STEADYHAND_E2E_MCP_CLIENT;
    log('mcp: agent starts');
    const agent = await new Promise((resolve) => {
      require('child_process').execFile(python, [script, connect.launcher, ws, out], { timeout: 120000 }, (err, stdout, stderr) => {
        resolve({ error: err ? String(err) : null, stderr: String(stderr).slice(-2000) });
      });
    });
    log(`mcp: agent done ${JSON.stringify(agent).slice(0, 300)}`);
    await sleep(500);
    sub.dispose();
    const seen = fs.existsSync(out) ? JSON.parse(fs.readFileSync(out, 'utf8')) : null;
    const after = { buffer: doc.getText(), dirty: doc.isDirty, disk: disk(f) };
    await vscode.window.showTextDocument(doc, { preview: false });
    await vscode.commands.executeCommand('workbench.action.files.revert');
    return { connect, clipboard, agent, seen, after, events: events.map((e) => ({ command: e.command, client: e.client, ok: e.result.ok, path: e.result.path })) };
  });

  // 9. A crashed server is restarted (and logged) and serves again.
  // The "Agent changes" view's actions: a change opens in the diff editor with its two sides;
  // "Take back" takes an earlier change out of the open buffer, keeping a later one; a change
  // overlapped by a later one is refused. Gutter marks follow the agents' lines.
  await step('reviewChanges', async () => {
    const file = P('review.py');
    const lines = Array.from({ length: 10 }, (_, i) => `line_${i + 1} = ${i + 1}\n`);
    const original = lines.join('');
    fs.writeFileSync(file, original);
    const doc = await vscode.workspace.openTextDocument(file);
    await vscode.window.showTextDocument(doc, { preview: false });
    await vscode.commands.executeCommand('steadyhand.client.showActivity');
    const call = (command, params) => api.command(command, params);
    await call('steadyhand.read', { file_path: file });
    const first = await call('steadyhand.edit', { file_path: file, old_string: 'line_2 = 2', new_string: 'second = 2' });
    const second = await call('steadyhand.edit', { file_path: file, old_string: 'line_8 = 8', new_string: 'eighth = 8' });
    await sleep(300);
    const marksAfterEdits = api.agentChangedLines(doc.uri);
    const listed = await call('steadyhand.changes', { path: file });
    const ids = (listed.changes || []).map((c) => c.id);
    const [laterId, earlierId] = ids;

    // Show the earlier change: the diff editor's two sides.
    const shown = await vscode.commands.executeCommand('steadyhand.client.showChange', earlierId);
    await sleep(800);
    const tab = vscode.window.tabGroups.activeTabGroup.activeTab;
    const input = tab && tab.input;
    const isDiff = input instanceof vscode.TabInputTextDiff;
    let left = null;
    let right = null;
    let leftScheme = null;
    if (isDiff) {
      leftScheme = input.original.scheme;
      left = (await vscode.workspace.openTextDocument(input.original)).getText();
      right = (await vscode.workspace.openTextDocument(input.modified)).getText();
    }
    const tabLabel = tab ? tab.label : null;
    await screenshot('change-diff');

    // Take it back: the buffer loses the earlier change and keeps the later one.
    await vscode.window.showTextDocument(doc, { preview: false });
    const takenBack = await vscode.commands.executeCommand('steadyhand.client.takeBackChange', earlierId);
    await sleep(500);
    const afterTakeBack = doc.getText();
    const diskAfterTakeBack = await waitFor(() => disk(file) === afterTakeBack && disk(file), 5000);
    const marksAfterTakeBack = api.agentChangedLines(doc.uri);

    // The user types on the line the later change wrote: its mark goes.
    const editor = await vscode.window.showTextDocument(doc, { preview: false });
    editor.selection = new vscode.Selection(7, 0, 7, 0);
    await vscode.commands.executeCommand('type', { text: '# ' });
    await sleep(300);
    const marksAfterTyping = api.agentChangedLines(doc.uri);
    await doc.save();

    // Two changes on the same lines: the earlier one cannot be taken back alone.
    await call('steadyhand.read', { file_path: file });
    await call('steadyhand.edit', { file_path: file, old_string: 'line_4 = 4', new_string: 'four = 4' });
    await call('steadyhand.edit', { file_path: file, old_string: 'four = 4', new_string: 'FOUR = 4' });
    const again = await call('steadyhand.changes', { path: file, limit: 2 });
    const overlapped = again.changes[1].id;
    const beforeConflict = doc.getText();
    const conflict = await vscode.commands.executeCommand('steadyhand.client.takeBackChange', overlapped);
    await sleep(300);
    const conflictUnchanged = doc.getText() === beforeConflict;
    await screenshot('changes-view');
    const conflictToasts = await queryToasts('conflict');
    await vscode.commands.executeCommand('notifications.clearAll').then(undefined, () => undefined);

    // The latest change, after the user typed (unsaved): refused, with "Take back anyway".
    await call('steadyhand.read', { file_path: file });
    await call('steadyhand.edit', { file_path: file, old_string: 'line_9 = 9', new_string: 'ninth = 9' });
    const latest = (await call('steadyhand.changes', { path: file, limit: 1 })).changes[0].id;
    const typing = await vscode.window.showTextDocument(doc, { preview: false });
    typing.selection = new vscode.Selection(0, 0, 0, 0);
    await vscode.commands.executeCommand('type', { text: '# typed\n' });
    await sleep(300);
    const stale = await vscode.commands.executeCommand('steadyhand.client.takeBackChange', latest);
    const staleToasts = await queryToasts('stale');
    const keptTyping = doc.getText().startsWith('# typed\n') && doc.getText().includes('ninth = 9');
    await vscode.commands.executeCommand('notifications.clearAll').then(undefined, () => undefined);
    await vscode.commands.executeCommand('workbench.action.files.revert').then(undefined, () => undefined);
    return {
      conflictToasts, stale, staleToasts, keptTyping,
      first, second, marksAfterEdits, ids, shown, isDiff, leftScheme, left, right, tabLabel,
      original, expectedAfter: original.replace('line_2 = 2', 'second = 2'),
      takenBack, afterTakeBack, diskAfterTakeBack, marksAfterTakeBack, marksAfterTyping,
      conflict, conflictUnchanged, laterId,
    };
  });

  // A move of an open file with unsaved typing: the typing goes with the tab to the new name,
  // still unsaved; the disk at the new path holds the saved bytes, the old path is gone. First
  // VS Code's own RenameFile on a dirty document (what the extension's capability relies on),
  // then the agent's move tool.
  await step('moveUnsaved', async () => {
    const tabsOf = () => vscode.window.tabGroups.all.flatMap((g) => g.tabs)
      .filter((t) => t.input instanceof vscode.TabInputText).map((t) => t.input.uri.fsPath);
    const docAt = (p) => vscode.workspace.textDocuments.find((d) => d.uri.fsPath === p && !d.isClosed);
    const typeAtStart = async (doc, text) => {
      const ed = await vscode.window.showTextDocument(doc, { preview: false });
      ed.selection = new vscode.Selection(0, 0, 0, 0);
      await vscode.commands.executeCommand('type', { text });
      await sleep(300);
    };
    const observe = async (from, to, saved, typed) => {
      const doc = await waitFor(() => docAt(to), 5000);
      await sleep(1500); // an editor that saves on a move would have written by now
      return {
        newOpen: !!doc, newText: doc ? doc.getText() : null, newDirty: doc ? doc.isDirty : null,
        keepsTyping: !!doc && doc.getText() === typed + saved,
        newDisk: disk(to), oldExists: fs.existsSync(from), oldDocOpen: !!docAt(from),
        newTab: tabsOf().includes(to), oldTab: tabsOf().includes(from),
      };
    };
    const cleanUp = async (p) => {
      const doc = docAt(p);
      if (doc) {
        await vscode.window.showTextDocument(doc, { preview: false });
        await vscode.commands.executeCommand('workbench.action.files.revert');
        await vscode.commands.executeCommand('workbench.action.closeActiveEditor');
      }
    };

    // VS Code's own workspace.applyEdit with a RenameFile, no Steadyhand in between.
    const pSaved = 'probe: saved line\n';
    const pFrom = P('probe-before.txt');
    const pTo = P('probe-after.txt');
    fs.writeFileSync(pFrom, pSaved);
    const pDoc = await vscode.workspace.openTextDocument(pFrom);
    await typeAtStart(pDoc, 'probe typing\n');
    const pDirtyBefore = pDoc.isDirty;
    const we = new vscode.WorkspaceEdit();
    we.renameFile(vscode.Uri.file(pFrom), vscode.Uri.file(pTo));
    const pApplied = await vscode.workspace.applyEdit(we);
    const vscodeRename = { dirtyBefore: pDirtyBefore, applied: pApplied, ...(await observe(pFrom, pTo, pSaved, 'probe typing\n')) };
    await cleanUp(pTo);

    // The agent reads the file, the user types without saving, the agent moves it.
    const saved = 'notes: saved by the user\nsecond saved line\n';
    const typed = '# typed by the user, not saved\n';
    const from = P('notes.md');
    const to = P('moved', 'notes-renamed.md');
    fs.writeFileSync(from, saved);
    const doc = await vscode.workspace.openTextDocument(from);
    await vscode.window.showTextDocument(doc, { preview: false });
    const read = await invoke('steadyhand_read_file', { file_path: from });
    await typeAtStart(doc, typed);
    const dirtyBefore = doc.isDirty;
    const move = await invoke('steadyhand_move_file', { source_path: from, destination_path: to });
    const after = await observe(from, to, saved, typed);
    await screenshot('move-unsaved');
    await cleanUp(to);
    return { vscodeRename, readVia: read.via, dirtyBefore, via: move.via, lmError: move.lmError || null, text: move.text, after };
  });

  await step('crashRestart', async () => {
    const serverPids = () => fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d)).filter((pid) => {
      try {
        const cmd = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
        const ppid = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')[1];
        return cmd.includes('steadyhand') && cmd.includes('serve') && Number(ppid) === process.pid;
      } catch { return false; }
    });
    const before = serverPids();
    const restartsBefore = api.status().crashRestarts;
    for (const pid of before) process.kill(Number(pid), 'SIGKILL');
    // Called once the extension has seen the crash, while the server comes back: the command
    // waits for it.
    const noticed = await waitFor(() => api.status().state !== 'running', 10000, 5);
    const stateAtCall = api.status().state;
    const readDuringRestart = noticed ? await tryCommand('steadyhand.read', { file_path: P('hello.txt') }) : null;
    const restarted = await waitFor(() => {
      const now = serverPids();
      return now.length > 0 && now.every((p) => !before.includes(p)) && api.status().state === 'running' && now;
    }, 30000, 200);
    const read = await vscode.commands.executeCommand('steadyhand.read', { file_path: P('hello.txt') });
    return {
      killed: before, restarted: restarted || null, restartsBefore, restartsAfter: api.status().crashRestarts, state: api.status().state, read,
      noticed: !!noticed, stateAtCall, readDuringRestart,
    };
  });

  // 10. Restart asked for twice, the second time while the first restart's client is starting:
  // the extension must end up running (not stuck between states).
  await step('restartDuringStart', async () => {
    const first = vscode.commands.executeCommand('steadyhand.client.restartServer');
    // A start clears the private environment's folder and sets it again once the interpreter is
    // resolved, just before the client starts.
    const cleared = await waitFor(() => !api.status().sitePackages, 30000, 5);
    const clientStarting = cleared && (await waitFor(() => api.status().state === 'starting' && !!api.status().sitePackages, 30000, 5));
    const stateAtSecond = api.status().state;
    const second = vscode.commands.executeCommand('steadyhand.client.restartServer');
    let settled = true;
    await withTimeout(Promise.all([first, second]), 90000, 'the two restarts').catch(() => { settled = false; });
    const running = await waitFor(() => api.status().state === 'running', 30000, 200);
    const read = await vscode.commands.executeCommand('steadyhand.read', { file_path: P('hello.txt') });
    return { clientStarting: !!clientStarting, stateAtSecond, settled, running: !!running, status: api.status(), read };
  });

  // 11. No usable Python: one clear notification with a button to the setting; then back.
  await step('badPython', async () => {
    const cfg = vscode.workspace.getConfiguration('steadyhand');
    const good = cfg.get('server.python');
    await cfg.update('server.python', '/nonexistent/python3', vscode.ConfigurationTarget.Global);
    const failed = await waitFor(() => api.status().state === 'failed' && api.status(), 30000, 200);
    fs.writeFileSync(path.join(OUT, 'query-notifications.request'), '');
    const toastsFile = path.join(OUT, 'query-notifications.json');
    await waitFor(() => fs.existsSync(toastsFile), 20000, 200);
    const toasts = fs.existsSync(toastsFile) ? JSON.parse(fs.readFileSync(toastsFile, 'utf8')) : null;
    const t0 = Date.now();
    const read = await api.read({ file_path: P('hello.txt') });
    const readMs = Date.now() - t0;
    const t1 = Date.now();
    const commandWhileFailed = await tryCommand('steadyhand.read', { file_path: P('hello.txt') });
    const commandMs = Date.now() - t1;
    await cfg.update('server.python', good, vscode.ConfigurationTarget.Global);
    const back = await waitFor(() => api.status().state === 'running', 60000, 200);
    await vscode.commands.executeCommand('notifications.clearAll').then(undefined, () => undefined);
    return { failed: failed || api.status(), toasts, readWhileFailed: read, readMs, commandWhileFailed, commandMs, runningAgain: !!back };
  });

  // 12. A setting changed while the server runs reaches it (workspace/didChangeConfiguration).
  await step('settingsChange', async () => {
    const cfg = vscode.workspace.getConfiguration('steadyhand');
    // Each read is of a file never read before, so none is answered with "file_unchanged".
    const probe = (name) => {
      const p = P('settings', `${name}.txt`);
      fs.mkdirSync(path.dirname(p), { recursive: true });
      fs.writeFileSync(p, 'one\ntwo\nthree\nfour\nfive\n');
      return vscode.commands.executeCommand('steadyhand.read', { file_path: p });
    };
    const before = await probe('before');
    await cfg.update('defaultReadLines', 2, vscode.ConfigurationTarget.Global);
    await sleep(1000);
    const after = await probe('after');
    await cfg.update('defaultReadLines', undefined, vscode.ConfigurationTarget.Global);
    await sleep(1000);
    const restored = await probe('restored');
    return { before, after, restored };
  });

  // 13. A warm start: the server restarted with its environment in place, to the first
  // answered command (what a window reload costs before an agent's first call is answered).
  await step('warmStart', async () => {
    const p = P('warm-start.txt');
    fs.writeFileSync(p, 'warm\n');
    const t0 = Date.now();
    await vscode.commands.executeCommand('steadyhand.client.restartServer');
    const read = await vscode.commands.executeCommand('steadyhand.read', { file_path: p });
    return { restartToFirstAnswerMs: Date.now() - t0, read };
  });

  await step('final', async () => ({ status: api.status() }));
  result.done = true;
  result.finished = new Date().toISOString();
  write();
  fs.renameSync(path.join(OUT, 'result.json.tmp'), path.join(OUT, 'result.json'));
}

function deactivate() {}

module.exports = { activate, deactivate };
