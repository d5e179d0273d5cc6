/** Comparing a document's text with the bytes on disk. Pure (no `vscode` import). */

/** Decodes file bytes the way the editor would for the encodings Steadyhand supports. */
export function decodeDisk(bytes: Uint8Array): string {
  if (bytes.length >= 3 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) {
    return new TextDecoder('utf-8').decode(bytes.subarray(3));
  }
  if (bytes.length >= 2 && bytes[0] === 0xff && bytes[1] === 0xfe) {
    return new TextDecoder('utf-16le').decode(bytes.subarray(2));
  }
  if (bytes.length >= 2 && bytes[0] === 0xfe && bytes[1] === 0xff) {
    // swap to LE, then decode
    const swapped = new Uint8Array(bytes.length - 2);
    for (let i = 2; i + 1 < bytes.length; i += 2) {
      swapped[i - 2] = bytes[i + 1] ?? 0;
      swapped[i - 1] = bytes[i] ?? 0;
    }
    return new TextDecoder('utf-16le').decode(swapped);
  }
  return new TextDecoder('utf-8').decode(bytes);
}

/** True when the disk bytes hold `text` (line endings compared as-is: the editor saves its own). */
export function diskMatches(bytes: Uint8Array, text: string): boolean {
  return decodeDisk(bytes) === text;
}
