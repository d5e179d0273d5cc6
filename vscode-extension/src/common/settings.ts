/**
 * The server settings, in ONE place. Each entry mirrors a setting of the Steadyhand server
 * (camelCase, as the server reads it from `initializationOptions` and from the `steadyhand`
 * section of `workspace/didChangeConfiguration`). `package.json` declares the same keys under
 * `steadyhand.<name>` (a unit test checks that both lists agree). To add a server setting: add it
 * here and under `contributes.configuration` in package.json.
 *
 * This module must not import `vscode` (it is unit-tested in plain Node).
 */

export type SettingType = 'string' | 'boolean' | 'integer' | 'string[]';

export interface ServerSettingSpec {
  /** Name in the server's settings object, and `steadyhand.<name>` in VS Code. */
  readonly name: string;
  readonly type: SettingType;
  readonly default: unknown;
  /** Allowed values for an enumerated string setting. */
  readonly values?: readonly string[];
}

export const SERVER_SETTINGS: readonly ServerSettingSpec[] = [
  { name: 'allowedPaths', type: 'string[]', default: [] },
  { name: 'denyGlobs', type: 'string[]', default: [] },
  { name: 'maxReadBytes', type: 'integer', default: 262144 },
  { name: 'maxReadTokens', type: 'integer', default: 25000 },
  { name: 'maxWriteBytes', type: 'integer', default: 1073741824 },
  { name: 'defaultReadLines', type: 'integer', default: 2000 },
  { name: 'maxLineChars', type: 'integer', default: 2000 },
  { name: 'maxTrackedFiles', type: 'integer', default: 10000 },
  { name: 'maxSessions', type: 'integer', default: 256 },
  { name: 'contentStoreBytes', type: 'integer', default: 67108864 },
  { name: 'contentStoreMaxFileBytes', type: 'integer', default: 1048576 },
  { name: 'staleDiffMaxLines', type: 'integer', default: 60 },
  { name: 'fsync', type: 'boolean', default: true },
  { name: 'saveAfterEdit', type: 'string', default: 'whenClean', values: ['whenClean', 'always', 'never'] },
  { name: 'confirmEdits', type: 'boolean', default: false },
  { name: 'applyEditTimeoutMs', type: 'integer', default: 30000 },
  { name: 'watch', type: 'boolean', default: true },
  { name: 'allowHardLinks', type: 'boolean', default: false },
  { name: 'history', type: 'boolean', default: true },
  { name: 'historyDir', type: 'string', default: '' },
  { name: 'historyMaxBytes', type: 'integer', default: 268435456 },
  { name: 'historyMaxFileBytes', type: 'integer', default: 16777216 },
  { name: 'protectedGlobs', type: 'string[]', default: ['.git/**', '.git', '.hg/**', '.svn/**', '.vscode/**', '.idea/**', '.vs/**', '.zed/**', '.fleet/**', '**/*.code-workspace'] },
  { name: 'allowProtectedWrites', type: 'boolean', default: false },
  { name: 'secrets', type: 'string', default: 'warn', values: ['warn', 'block', 'off'] },
  { name: 'syntaxCheck', type: 'string', default: 'warn', values: ['warn', 'block', 'off'] },
  { name: 'searchEngine', type: 'string', default: 'auto', values: ['auto', 'ripgrep', 'python'] },
  { name: 'imageMaxPixels', type: 'integer', default: 1150000 },
  { name: 'imageMaxDimension', type: 'integer', default: 1568 },
  { name: 'imageMaxBytes', type: 'integer', default: 1048576 },
  { name: 'pdfMaxPages', type: 'integer', default: 20 },
  { name: 'maxDocumentBytes', type: 'integer', default: 67108864 },
];

/** VS Code configuration section that holds the server settings. */
export const CONFIG_SECTION = 'steadyhand';

export type ServerSettings = Record<string, unknown>;

function valid(spec: ServerSettingSpec, value: unknown): boolean {
  switch (spec.type) {
    case 'string':
      return typeof value === 'string' && (spec.values === undefined || spec.values.includes(value));
    case 'boolean':
      return typeof value === 'boolean';
    case 'integer':
      return typeof value === 'number' && Number.isInteger(value) && value > 0;
    case 'string[]':
      return Array.isArray(value) && value.every((v) => typeof v === 'string');
  }
}

export interface SettingsReadResult {
  settings: ServerSettings;
  /** Human-readable problems (a value of the wrong type falls back to the default). */
  problems: string[];
}

/**
 * Builds the server settings object from a getter (`(name) => config.get(name)`), checking types
 * and falling back to the default for invalid values. Keys the user did not set get their defaults,
 * so the server always receives a complete object.
 */
export function readServerSettings(get: (name: string) => unknown): SettingsReadResult {
  const settings: ServerSettings = {};
  const problems: string[] = [];
  for (const spec of SERVER_SETTINGS) {
    const value = get(spec.name);
    if (value === undefined || value === null) {
      settings[spec.name] = spec.default;
    } else if (valid(spec, value)) {
      settings[spec.name] = value;
    } else {
      problems.push(
        `steadyhand.${spec.name}: ${JSON.stringify(value)} is not a valid ${spec.type}` +
          (spec.values ? ` (one of ${spec.values.join(', ')})` : '') +
          `; using ${JSON.stringify(spec.default)}`,
      );
      settings[spec.name] = spec.default;
    }
  }
  return { settings, problems };
}

/** Names of settings whose change needs a server restart rather than didChangeConfiguration. */
export const CLIENT_RESTART_SETTINGS: readonly string[] = ['server.python'];
