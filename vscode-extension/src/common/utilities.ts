/** Waiting with a limit. Pure (no `vscode` import). */

/** `p`'s value, or undefined when it takes longer than `ms`. */
export async function withTimeout<T>(p: PromiseLike<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const t = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), ms)));
  try {
    return await Promise.race([Promise.resolve(p), t]);
  } finally {
    clearTimeout(timer);
  }
}

export function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
