/**
 * Language-model tools ↔ server commands. Pure (no `vscode` import).
 *
 * The tool inputs use the server's own snake_case parameter names (the names models already know),
 * so mapping is a checked copy plus the session. `package.json` declares the same schemas under
 * `contributes.languageModelTools`; a unit test keeps the two in step.
 */

export type FieldType = 'string' | 'integer' | 'boolean';

export interface ToolField {
  readonly name: string;
  readonly type: FieldType;
  readonly required: boolean;
  /** Smallest allowed value for integers. */
  readonly min?: number;
}

export interface ToolSpec {
  /** Tool name as models see it. */
  readonly tool: string;
  /** Server command it runs. */
  readonly command: string;
  readonly fields: readonly ToolField[];
  /** Whether the tool changes files (diagnostics are collected after it). */
  readonly mutates: boolean;
}

export const COMMANDS = {
  read: 'steadyhand.read',
  edit: 'steadyhand.edit',
  write: 'steadyhand.write',
  multiEdit: 'steadyhand.multiEdit',
  sessionFork: 'steadyhand.session.fork',
  sessionClose: 'steadyhand.session.close',
} as const;

/** Server commands whose successful result changes a file (counted as agent edits). */
export const MUTATING_COMMANDS: ReadonlySet<string> = new Set([COMMANDS.edit, COMMANDS.write, COMMANDS.multiEdit]);

export const TOOLS: readonly ToolSpec[] = [
  {
    tool: 'steadyhand_read_file',
    command: COMMANDS.read,
    mutates: false,
    fields: [
      { name: 'file_path', type: 'string', required: true },
      { name: 'offset', type: 'integer', required: false, min: 1 },
      { name: 'limit', type: 'integer', required: false, min: 1 },
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
    ],
  },
  {
    tool: 'steadyhand_write_file',
    command: COMMANDS.write,
    mutates: true,
    fields: [
      { name: 'file_path', type: 'string', required: true },
      { name: 'content', type: 'string', required: true },
    ],
  },
];

export const TOOL_NAMES: readonly string[] = TOOLS.map((t) => t.tool);

export function toolSpec(tool: string): ToolSpec | undefined {
  return TOOLS.find((t) => t.tool === tool);
}

export type ToolMapping =
  | { ok: true; spec: ToolSpec; command: string; params: Record<string, unknown> }
  | { ok: false; error: string };

function typeOk(field: ToolField, value: unknown): boolean {
  switch (field.type) {
    case 'string':
      return typeof value === 'string';
    case 'boolean':
      return typeof value === 'boolean';
    case 'integer':
      return typeof value === 'number' && Number.isInteger(value) && (field.min === undefined || value >= field.min);
  }
}

/** snake_case form of a camelCase key, for "did you mean" hints. */
function snake(key: string): string {
  return key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
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
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    return { ok: false, error: `The input of ${tool} must be a JSON object with ${spec.fields.map((f) => f.name).join(', ')}.` };
  }
  const obj = input as Record<string, unknown>;
  const params: Record<string, unknown> = {};
  const problems: string[] = [];
  const known = new Set(spec.fields.map((f) => f.name));
  for (const key of Object.keys(obj)) {
    if (!known.has(key)) {
      const hint = known.has(snake(key)) ? ` (did you mean ${snake(key)}?)` : '';
      problems.push(`unknown parameter ${key}${hint}`);
    }
  }
  for (const field of spec.fields) {
    const value = obj[field.name];
    if (value === undefined || value === null) {
      if (field.required) {
        problems.push(`missing required parameter ${field.name}`);
      }
      continue;
    }
    if (!typeOk(field, value)) {
      const expected = field.type === 'integer' && field.min !== undefined ? `an integer >= ${field.min}` : `a ${field.type}`;
      problems.push(`${field.name} must be ${expected}`);
      continue;
    }
    params[field.name] = value;
  }
  if (problems.length > 0) {
    return { ok: false, error: `Invalid input for ${tool}: ${problems.join('; ')}.` };
  }
  params.session = session;
  return { ok: true, spec, command: spec.command, params };
}

/** Builds the JSON schema of a tool's input from its spec (compared with package.json in tests). */
export function schemaFields(spec: ToolSpec): { properties: Record<string, string>; required: string[] } {
  const properties: Record<string, string> = {};
  for (const f of spec.fields) {
    properties[f.name] = f.type;
  }
  return { properties, required: spec.fields.filter((f) => f.required).map((f) => f.name) };
}
