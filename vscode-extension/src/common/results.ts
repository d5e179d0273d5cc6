/**
 * What the server's commands answer, and the answers the extension gives itself when a call cannot
 * reach the server. Pure (no `vscode` import).
 */

/** What the server returns for every command (extra structured fields vary per command). */
export interface CommandResult {
  ok: boolean;
  message: string;
  error?: string;
  path?: string;
  [key: string]: unknown;
}

export function isCommandResult(value: unknown): value is CommandResult {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { ok?: unknown }).ok === 'boolean' &&
    typeof (value as { message?: unknown }).message === 'string'
  );
}

/** What a model should do when the server is not running: retrying at once cannot help. */
export const NOT_RUNNING_NEXT_STEP =
  "Do not retry now; ask the user to run 'Steadyhand: Restart Server' or to check the Steadyhand output channel.";

export function notRunningResult(reason?: string): CommandResult {
  const why = reason ? `: ${reason.replace(/\.$/, '')}` : '';
  return { ok: false, error: 'server_not_running', message: `The Steadyhand server is not running${why}. ${NOT_RUNNING_NEXT_STEP}` };
}

/** A result for an input the extension refused before reaching the server. */
export function invalidInputResult(message: string): CommandResult {
  return { ok: false, error: 'invalid_params', message };
}

/** Result for a JSON-RPC error (e.g. InvalidParams) or a transport failure. */
export function requestErrorResult(err: unknown): CommandResult {
  const e = err as { code?: unknown; message?: unknown };
  const msg = typeof e?.message === 'string' ? e.message : String(err);
  if (e?.code === -32602) {
    return { ok: false, error: 'invalid_params', message: msg };
  }
  if (e?.code === -32800) {
    return { ok: false, error: 'cancelled', message: 'The request was cancelled.' };
  }
  // ConnectionInactive: the client stopped between the state check and the send.
  if (e?.code === -32096) {
    return notRunningResult();
  }
  return { ok: false, error: 'server_error', message: `The Steadyhand server could not run the request: ${msg}` };
}

