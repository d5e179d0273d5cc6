/**
 * Language-model tools ↔ server commands. Pure (no `vscode` import).
 *
 * The tool inputs use the server's own snake_case parameter names (the names models already know),
 * so mapping is a checked copy plus the session. `package.json` declares the same schemas under
 * `contributes.languageModelTools`; a unit test keeps the two in step.
 */
import { COMMANDS } from '../common/commands';

export type FieldType = 'string' | 'integer' | 'boolean' | 'array';

export interface ToolField {
  readonly name: string;
  readonly type: FieldType;
  readonly required: boolean;
  /** Smallest allowed value for integers. */
  readonly min?: number;
  /** Allowed values for an enumerated string. */
  readonly values?: readonly string[];
  /** For arrays: the fields of each item (an object); at least one item is required. */
  readonly items?: readonly ToolField[];
}

export interface ToolSpec {
  /** Tool name as models see it. */
  readonly tool: string;
  /** Server command it runs. */
  readonly command: string;
  readonly fields: readonly ToolField[];
  /** Whether the tool changes files (diagnostics are collected after it). */
  readonly mutates: boolean;
  /** Other names models use for a field, mapped to the field (the server accepts them too). */
  readonly aliases?: Readonly<Record<string, string>>;
}

const DRY_RUN: ToolField = { name: 'dry_run', type: 'boolean', required: false };
const EXPECTED_REPLACEMENTS: ToolField = { name: 'expected_replacements', type: 'integer', required: false, min: 1 };

// `session` is left out on purpose: the tools run in `steadyhand.tools.session`, not one the model picks.
export const TOOLS: readonly ToolSpec[] = [
  {
    tool: 'steadyhand_read_file',
    command: COMMANDS.read,
    mutates: false,
    fields: [
      { name: 'file_path', type: 'string', required: true },
      { name: 'offset', type: 'integer', required: false, min: 1 },
      { name: 'limit', type: 'integer', required: false, min: 1 },
      { name: 'pages', type: 'string', required: false },
      { name: 'include_images', type: 'boolean', required: false },
    ],
  },
  {
    tool: 'steadyhand_edit_file',
    command: COMMANDS.edit,
    mutates: true,
    fields: [
      { name: 'file_path', type: 'string', required: true },
      { name: 'old_string', type: 'string', required: true },
      { name: 'new_string', type: 'string', required: true },
      { name: 'replace_all', type: 'boolean', required: false },
      EXPECTED_REPLACEMENTS,
      DRY_RUN,
    ],
  },
  {
    tool: 'steadyhand_multi_edit_file',
    command: COMMANDS.multiEdit,
    mutates: true,
    fields: [
      { name: 'file_path', type: 'string', required: true },
      {
        name: 'edits',
        type: 'array',
        required: true,
        items: [
          { name: 'old_string', type: 'string', required: true },
          { name: 'new_string', type: 'string', required: true },
          { name: 'replace_all', type: 'boolean', required: false },
          EXPECTED_REPLACEMENTS,
        ],
      },
      DRY_RUN,
    ],
  },
  {
    tool: 'steadyhand_write_file',
    command: COMMANDS.write,
    mutates: true,
    fields: [
      { name: 'file_path', type: 'string', required: true },
      { name: 'content', type: 'string', required: true },
      DRY_RUN,
    ],
  },
  {
    tool: 'steadyhand_edit_notebook',
    command: COMMANDS.notebookEdit,
    mutates: true,
    aliases: { notebook_path: 'file_path' },
    fields: [
      { name: 'file_path', type: 'string', required: true },
      { name: 'cell_id', type: 'string', required: false },
      { name: 'new_source', type: 'string', required: false },
      { name: 'edit_mode', type: 'string', required: false, values: ['replace', 'insert', 'delete'] },
      { name: 'cell_type', type: 'string', required: false, values: ['code', 'markdown', 'raw'] },
    ],
  },
];

export const TOOL_NAMES: readonly string[] = TOOLS.map((t) => t.tool);

export function toolSpec(tool: string): ToolSpec | undefined {
  return TOOLS.find((t) => t.tool === tool);
}

/** The language-model tool that runs a server command, if there is one. */
export function toolForCommand(command: string): string | undefined {
  return TOOLS.find((t) => t.command === command)?.tool;
}

export type ToolMapping =
  | { ok: true; spec: ToolSpec; command: string; params: Record<string, unknown> }
  | { ok: false; error: string };

function expectedType(field: ToolField): string {
  if (field.values) {
    return `one of ${field.values.map((v) => JSON.stringify(v)).join(', ')}`;
  }
  if (field.type === 'integer' && field.min !== undefined) {
    return `an integer >= ${field.min}`;
  }
  if (field.type === 'array') {
    return `a non-empty array of objects with ${(field.items ?? []).map((f) => f.name).join(', ')}`;
  }
  return `a ${field.type}`;
}

function typeOk(field: ToolField, value: unknown): boolean {
  switch (field.type) {
    case 'string':
      return typeof value === 'string' && (field.values === undefined || field.values.includes(value));
    case 'boolean':
      return typeof value === 'boolean';
    case 'integer':
      return typeof value === 'number' && Number.isInteger(value) && (field.min === undefined || value >= field.min);
    case 'array':
      return Array.isArray(value) && value.length > 0;
  }
}

/** snake_case form of a camelCase key, for "did you mean" hints. */
function snake(key: string): string {
  return key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Checks `obj` against `fields`; returns the checked copy, adding problems named under `where`. */
function checkFields(fields: readonly ToolField[], obj: Record<string, unknown>, where: string, problems: string[]): Record<string, unknown> {
  const params: Record<string, unknown> = {};
  const known = new Set(fields.map((f) => f.name));
  for (const key of Object.keys(obj)) {
    if (!known.has(key)) {
      const hint = known.has(snake(key)) ? ` (did you mean ${snake(key)}?)` : '';
      problems.push(`unknown parameter ${where}${key}${hint}`);
    }
  }
  for (const field of fields) {
    const value = obj[field.name];
    if (value === undefined || value === null) {
      if (field.required) {
        problems.push(`missing required parameter ${where}${field.name}`);
      }
      continue;
    }
    if (!typeOk(field, value)) {
      problems.push(`${where}${field.name} must be ${expectedType(field)}`);
      continue;
    }
    if (field.type === 'array' && field.items && Array.isArray(value)) {
      const items = field.items;
      params[field.name] = (value as unknown[]).map((item, i) => {
        const at = `${where}${field.name}[${i}].`;
        if (!isObject(item)) {
          problems.push(`${where}${field.name}[${i}] must be an object with ${items.map((f) => f.name).join(', ')}`);
          return item;
        }
        return checkFields(items, item, at, problems);
      });
      continue;
    }
    params[field.name] = value;
  }
  return params;
}

/**
 * Checks a tool input and turns it into the server command's single parameter object.
 * Errors are sentences a model can act on.
 */
export function toolInputToCommand(tool: string, input: unknown, session: string): ToolMapping {
  const spec = toolSpec(tool);
  if (!spec) {
    return { ok: false, error: `Unknown tool ${tool}.` };
  }
  if (!isObject(input)) {
    return { ok: false, error: `The input of ${tool} must be a JSON object with ${spec.fields.map((f) => f.name).join(', ')}.` };
  }
  const problems: string[] = [];
  let obj = input;
  for (const [alias, name] of Object.entries(spec.aliases ?? {})) {
    if (alias in obj) {
      if (name in obj) {
        problems.push(`pass ${name} or ${alias}, not both`);
      } else {
        const { [alias]: value, ...rest } = obj;
        obj = { ...rest, [name]: value };
      }
    }
  }
  const params = checkFields(spec.fields, obj, '', problems);
  if (problems.length > 0) {
    return { ok: false, error: `Invalid input for ${tool}: ${problems.join('; ')}.` };
  }
  params.session = session;
  return { ok: true, spec, command: spec.command, params };
}

export interface PropertyShape {
  type: FieldType;
  minimum?: number;
  enum?: string[];
  minItems?: number;
  items?: ObjectShape;
}

export interface ObjectShape {
  type: 'object';
  properties: Record<string, PropertyShape>;
  required: string[];
  additionalProperties: false;
}

/**
 * The JSON schema of a tool's input (or of an array's items) as the spec defines it, without
 * descriptions and defaults: package.json must declare the same (a unit test compares them).
 */
export function schemaShape(fields: readonly ToolField[]): ObjectShape {
  const properties: Record<string, PropertyShape> = {};
  for (const f of fields) {
    const p: PropertyShape = { type: f.type };
    if (f.min !== undefined) {
      p.minimum = f.min;
    }
    if (f.values) {
      p.enum = [...f.values];
    }
    if (f.items) {
      p.minItems = 1;
      p.items = schemaShape(f.items);
    }
    properties[f.name] = p;
  }
  return { type: 'object', properties, required: fields.filter((f) => f.required).map((f) => f.name), additionalProperties: false };
}
