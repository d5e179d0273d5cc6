/**
 * Connecting agents that take their tools over MCP (Claude Code, Codex CLI, Gemini CLI, Cursor,
 * VS Code, Zed, Neovim's mcphub) to Steadyhand: `steadyhand mcp`, run by a small launcher that
 * the extension keeps in its storage folder, which starts the server with the extension's private
 * interpreter and environment. Run next to this window's server, `steadyhand mcp` attaches to it,
 * so the agent's edits land in this window's editors. Pure (no `vscode` import).
 */

export interface Launcher {
  /** File name inside the launcher folder. */
  name: string;
  content: string;
}

export interface HostSnippet {
  id: string;
  label: string;
  /** Where the text goes, in a few words. */
  where: string;
  text: string;
}

function shQuote(s: string): string {
  return /^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

/** The launcher script: the interpreter (with its fixed arguments) running `-m steadyhand`. */
export function launcherScript(command: string, args: readonly string[], sitePackages: string | undefined, platform: string): Launcher {
  if (platform === 'win32') {
    const lines = ['@echo off', 'rem Written by the Steadyhand extension: runs its server with its private interpreter.'];
    lines.push('set PYTHONHOME=', sitePackages ? `set "PYTHONPATH=${sitePackages}"` : 'set PYTHONPATH=');
    lines.push('set PYTHONNOUSERSITE=1', 'set PYTHONUTF8=1');
    lines.push(`"${command}" ${args.map((a) => `"${a}"`).join(' ')} -m steadyhand %*`.replace(/ {2,}/g, ' '));
    return { name: 'steadyhand.cmd', content: lines.join('\r\n') + '\r\n' };
  }
  const env = [sitePackages ? `PYTHONPATH=${shQuote(sitePackages)}` : '', 'PYTHONNOUSERSITE=1', 'PYTHONUTF8=1'].filter(Boolean).join(' ');
  const argv = [command, ...args].map(shQuote).join(' ');
  return {
    name: 'steadyhand',
    content: `#!/bin/sh\n# Written by the Steadyhand extension: runs its server with its private interpreter.\nunset PYTHONHOME\n${env} exec ${argv} -m steadyhand "$@"\n`,
  };
}

function json(value: unknown): string {
  return JSON.stringify(value, null, 2);
}

/** How to add `LAUNCHER mcp` to each host, with the launcher's absolute path. */
export function hostSnippets(launcher: string, platform: string): HostSnippet[] {
  const quoted = platform === 'win32' ? `"${launcher}"` : shQuote(launcher);
  const server = { command: launcher, args: ['mcp'] };
  return [
    {
      id: 'claude',
      label: 'Claude Code',
      where: 'run in your project folder',
      text: `claude mcp add steadyhand -- ${quoted} mcp`,
    },
    {
      id: 'codex',
      label: 'Codex CLI',
      where: 'add to ~/.codex/config.toml',
      text: `[mcp_servers.steadyhand]\ncommand = ${JSON.stringify(launcher)}\nargs = ["mcp"]\n`,
    },
    {
      id: 'gemini',
      label: 'Gemini CLI',
      where: 'add to .gemini/settings.json',
      text: json({ mcpServers: { steadyhand: server } }),
    },
    {
      id: 'cursor',
      label: 'Cursor, or a project .mcp.json',
      where: 'save as .cursor/mcp.json (or .mcp.json) in your project',
      text: json({ mcpServers: { steadyhand: { command: launcher, args: ['mcp', '${workspaceFolder}'] } } }),
    },
    {
      id: 'vscode',
      label: 'VS Code (agent mode)',
      where: 'save as .vscode/mcp.json',
      text: json({ servers: { steadyhand: { type: 'stdio', command: launcher, args: ['mcp', '${workspaceFolder}'] } } }),
    },
    {
      id: 'zed',
      label: 'Zed',
      where: 'add to Zed settings.json',
      text: json({ context_servers: { steadyhand: { command: launcher, args: ['mcp'] } } }),
    },
    {
      id: 'mcphub',
      label: 'Neovim (mcphub.nvim)',
      where: 'add to ~/.config/mcphub/servers.json',
      text: json({ mcpServers: { steadyhand: server } }),
    },
    {
      id: 'command',
      label: 'Just the command line',
      where: 'for any host that starts MCP servers on stdio',
      text: `${quoted} mcp`,
    },
  ];
}
