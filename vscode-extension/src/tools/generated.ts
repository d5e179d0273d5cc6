/**
 * The language-model tools: generated from the server's tool source
 * (server/steadyhand/protocol/spec) by `make tool-schemas`. Do not edit: a test fails
 * when this file differs from what the source gives.
 */
import type { ToolSpec } from './table';

export const TOOLS: readonly ToolSpec[] = [
  {
    tool: "steadyhand_read_file",
    command: "steadyhand.read",
    mutates: false,
    fields: [
      { name: "file_path", type: "string", required: true },
      { name: "offset", type: "integer", required: false, min: 0 },
      { name: "limit", type: "integer", required: false, min: 1 },
      { name: "pages", type: "string", required: false, pattern: "^\\s*\\d{1,9}\\s*(?:-\\s*\\d{0,9}\\s*)?(?:,\\s*\\d{1,9}\\s*(?:-\\s*\\d{0,9}\\s*)?)*$" },
    ],
  },
  {
    tool: "steadyhand_edit_file",
    command: "steadyhand.edit",
    mutates: true,
    fields: [
      { name: "file_path", type: "string", required: true },
      { name: "old_string", type: "string", required: true },
      { name: "new_string", type: "string", required: true },
      { name: "replace_all", type: "boolean", required: false },
      { name: "expected_replacements", type: "integer", required: false, min: 1 },
      { name: "dry_run", type: "boolean", required: false },
      { name: "include_diff", type: "boolean", required: false },
    ],
  },
  {
    tool: "steadyhand_multi_edit_file",
    command: "steadyhand.multiEdit",
    mutates: true,
    fields: [
      { name: "file_path", type: "string", required: true },
      { name: "edits", type: "array", required: true, minItems: 1, items: [
          { name: "old_string", type: "string", required: true },
          { name: "new_string", type: "string", required: true },
          { name: "replace_all", type: "boolean", required: false },
          { name: "expected_replacements", type: "integer", required: false, min: 1 },
        ] },
      { name: "dry_run", type: "boolean", required: false },
      { name: "include_diff", type: "boolean", required: false },
    ],
  },
  {
    tool: "steadyhand_write_file",
    command: "steadyhand.write",
    mutates: true,
    fields: [
      { name: "file_path", type: "string", required: true },
      { name: "content", type: "string", required: true },
      { name: "dry_run", type: "boolean", required: false },
      { name: "include_diff", type: "boolean", required: false },
    ],
  },
  {
    tool: "steadyhand_edit_notebook",
    command: "steadyhand.notebookEdit",
    mutates: true,
    aliases: { notebook_path: "file_path" },
    fields: [
      { name: "file_path", type: "string", required: true },
      { name: "cell_id", type: "string", required: false, minLength: 1, maxLength: 256 },
      { name: "new_source", type: "string", required: false },
      { name: "edit_mode", type: "string", required: false, values: ["replace", "insert", "delete"] },
      { name: "cell_type", type: "string", required: false, values: ["code", "markdown", "raw"] },
      { name: "include_diff", type: "boolean", required: false },
    ],
  },
];

/** Every command the server advertises (each is a VS Code command too). */
export const SERVER_COMMAND_NAMES: readonly string[] = [
  "steadyhand.read",
  "steadyhand.edit",
  "steadyhand.multiEdit",
  "steadyhand.write",
  "steadyhand.notebookEdit",
  "steadyhand.list",
  "steadyhand.search",
  "steadyhand.info",
  "steadyhand.createDirectory",
  "steadyhand.history",
  "steadyhand.undo",
  "steadyhand.checkpoint",
  "steadyhand.rewind",
  "steadyhand.changes",
  "steadyhand.change",
  "steadyhand.session.fork",
  "steadyhand.session.close",
  "steadyhand.ping",
];
