/**
 * The server logs to stderr with Python's logging (`2026-01-01 12:00:00,123 INFO name: text`).
 * Route each line to the output channel at its own level, without the timestamp (the channel adds
 * its own). Lines in another shape (a traceback) stay at the level of the record they belong to.
 * Pure (no `vscode` import).
 */

export type LogLevel = 'trace' | 'debug' | 'info' | 'warn' | 'error';

const LEVELS: Record<string, LogLevel> = {
  DEBUG: 'debug',
  INFO: 'info',
  WARNING: 'warn',
  WARN: 'warn',
  ERROR: 'error',
  CRITICAL: 'error',
};

const RECORD = /^\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:[,.]\d+)?\s+(DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL)\s+(.*)$/;

export class ServerLogParser {
  private current: LogLevel = 'error';

  /** Returns the level and text for one stderr line. */
  line(raw: string): { level: LogLevel; text: string } {
    const m = RECORD.exec(raw);
    if (m) {
      this.current = LEVELS[m[1] ?? 'ERROR'] ?? 'error';
      return { level: this.current, text: m[2] ?? '' };
    }
    if (raw.startsWith('Traceback (most recent call last)')) {
      this.current = 'error';
    }
    return { level: this.current, text: raw };
  }
}
