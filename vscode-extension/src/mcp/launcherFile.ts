/**
 * The launcher of `steadyhand mcp` on disk: `<storage>/bin/steadyhand` (`steadyhand.cmd` on
 * Windows), rewritten at every server start with the interpreter and private environment that
 * start found, so that the set-up an MCP host was given stays valid across updates. No `vscode`
 * import.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { errorText } from '../common/utilities';
import { launcherScript } from './launcher';

export class McpLauncher {
  private file: string | undefined;

  constructor(
    private readonly storageDir: string,
    private readonly warn: (line: string) => void,
    private readonly platform: string = process.platform,
  ) {}

  /** The launcher's path, once a start has written it. */
  get path(): string | undefined {
    return this.file;
  }

  /** Writes the launcher for this interpreter and environment (atomically); none when that fails. */
  write(command: string, args: readonly string[], sitePackages: string | undefined): string | undefined {
    const l = launcherScript(command, args, sitePackages, this.platform);
    const dir = path.join(this.storageDir, 'bin');
    const file = path.join(dir, l.name);
    try {
      fs.mkdirSync(dir, { recursive: true });
      const tmp = `${file}.tmp-${process.pid}`;
      fs.writeFileSync(tmp, l.content, { mode: 0o755 });
      fs.renameSync(tmp, file);
      this.file = file;
      return file;
    } catch (err) {
      this.warn(`Could not write the MCP launcher ${file}: ${errorText(err)}`);
      this.file = undefined;
      return undefined;
    }
  }
}
