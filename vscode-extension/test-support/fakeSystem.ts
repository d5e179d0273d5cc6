/** A machine made of a list of files, for the interpreter lookup's tests (any system on any other). */
import * as path from 'node:path';
import type { HostSystem } from '../src/common/python/locations';

export function fakeSystem(
  platform: NodeJS.Platform,
  files: readonly string[],
  opts: { env?: Record<string, string>; home?: string } = {},
): HostSystem {
  const p = platform === 'win32' ? path.win32 : path.posix;
  const norm = (f: string): string => (platform === 'win32' ? f.toLowerCase() : f);
  const all = new Set(files.map(norm));
  const dirs = new Set<string>();
  for (const f of files) {
    for (let d = p.dirname(f); d !== p.dirname(d); d = p.dirname(d)) {
      dirs.add(norm(d));
    }
  }
  return {
    platform,
    env: opts.env ?? {},
    home: opts.home ?? (platform === 'win32' ? 'C:\\Users\\ana' : platform === 'darwin' ? '/Users/ana' : '/home/ana'),
    isFile: (f) => all.has(norm(f)),
    isDirectory: (d) => dirs.has(norm(d)),
    listDir: (d) => {
      const names = new Set<string>();
      for (const f of files) {
        const rel = p.relative(d, f);
        if (rel !== '' && !rel.startsWith('..') && !p.isAbsolute(rel)) {
          names.add(rel.split(p.sep)[0] ?? rel);
        }
      }
      return [...names];
    },
  };
}
