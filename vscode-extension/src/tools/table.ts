/**
 * Language-model tools ↔ server commands. Pure (no `vscode` import).
 *
 * The tool inputs use the server's own snake_case parameter names (the names models already know),
 * so mapping is a checked copy plus the session. The tools, their fields and bounds come from the
 * server's tool source, generated into `generated.ts` (with `package.json`'s
 * `contributes.languageModelTools`) by `make tool-schemas`; a Python test fails when either differs
 * from the source, and a unit test here that the two agree.
 */
import { TOOLS } from './generated';

export { TOOLS };

export type FieldType = 'string' | 'integer' | 'boolean' | 'array';

export interface ToolField {
  readonly name: string;
  readonly type: FieldType;
  readonly required: boolean;
  /** Smallest allowed value for integers. */
  readonly min?: number;
  /** Bounds on a string's length, in characters (code points, as JSON Schema counts them). */
  readonly minLength?: number;
  readonly maxLength?: number;
  /** A regular expression a string must match (anchored). */
  readonly pattern?: string;
  /** Allowed values for an enumerated string. */
  readonly values?: readonly string[];
  /** For arrays: the fewest items. */
  readonly minItems?: number;
  /** For arrays: the fields of each item (an object). */
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

// `session` is never a field: the tools run in `steadyhand.tools.session`, not one the model picks.
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
    const some = (field.minItems ?? 0) > 0 ? 'a non-empty array' : 'an array';
    return `${some} of objects with ${(field.items ?? []).map((f) => f.name).join(', ')}`;
  }
  if (field.type === 'string' && field.pattern !== undefined) {
    return `a string matching ${field.pattern}`;
  }
  if (field.type === 'string' && (field.minLength !== undefined || field.maxLength !== undefined)) {
    return `a string of ${field.minLength ?? 0} to ${field.maxLength ?? 'any number of'} characters`;
  }
  return `a ${field.type}`;
}

function stringOk(field: ToolField, value: string): boolean {
  const length = [...value].length;
  return (
    (field.values === undefined || field.values.includes(value)) &&
    (field.minLength === undefined || length >= field.minLength) &&
    (field.maxLength === undefined || length <= field.maxLength) &&
    (field.pattern === undefined || new RegExp(field.pattern).test(value))
  );
}

function typeOk(field: ToolField, value: unknown): boolean {
  switch (field.type) {
    case 'string':
      return typeof value === 'string' && stringOk(field, value);
    case 'boolean':
      return typeof value === 'boolean';
    case 'integer':
      return typeof value === 'number' && Number.isInteger(value) && (field.min === undefined || value >= field.min);
    case 'array':
      return Array.isArray(value) && value.length >= (field.minItems ?? 0);
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
  minLength?: number;
  maxLength?: number;
  pattern?: string;
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
    if (f.minLength !== undefined) {
      p.minLength = f.minLength;
    }
    if (f.maxLength !== undefined) {
      p.maxLength = f.maxLength;
    }
    if (f.pattern !== undefined) {
      p.pattern = f.pattern;
    }
    if (f.values) {
      p.enum = [...f.values];
    }
    if (f.minItems !== undefined) {
      p.minItems = f.minItems;
    }
    if (f.items) {
      p.items = schemaShape(f.items);
    }
    properties[f.name] = p;
  }
  return { type: 'object', properties, required: fields.filter((f) => f.required).map((f) => f.name), additionalProperties: false };
}
