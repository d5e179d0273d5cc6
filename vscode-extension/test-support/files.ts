/** Where the unit tests find the extension's own files and, in a full checkout, the server's. */
import * as fs from 'node:fs';
import * as path from 'node:path';

/** The extension's folder (the one holding package.json), found upwards from the compiled test. */
export function extensionRoot(): string {
  for (let dir = __dirname; ; dir = path.dirname(dir)) {
    if (fs.existsSync(path.join(dir, 'package.json')) && fs.existsSync(path.join(dir, '.vscodeignore'))) {
      return dir;
    }
    if (path.dirname(dir) === dir) {
      throw new Error(`no extension folder above ${__dirname}`);
    }
  }
}

/** A file of the server's source (`server/steadyhand/...`), when this checkout has the server next to the extension. */
export function serverSource(...parts: string[]): string | undefined {
  const file = path.join(extensionRoot(), '..', 'server', 'steadyhand', ...parts);
  return fs.existsSync(file) ? file : undefined;
}

/** The extension's package.json, parsed. */
export function packageJson<T>(): T {
  return JSON.parse(fs.readFileSync(path.join(extensionRoot(), 'package.json'), 'utf8')) as T;
}

/** A file of the repository around the extension (README.md, docs/…), when this checkout has it. */
export function repoFile(...parts: string[]): string | undefined {
  const file = path.join(extensionRoot(), '..', ...parts);
  return fs.existsSync(file) ? file : undefined;
}
