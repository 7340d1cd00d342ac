/**
 * A file named by a command's flag (`submit --input-file`, `job checkpoint --file`), read a chunk at
 * a time and never held whole unless the caller keeps the chunks: it may be a 3 GB file, a pipe or
 * /dev/zero. A path that cannot be read, or names a directory, is refused naming the flag (exit 2).
 */
import { open, type FileHandle } from 'node:fs/promises';
import { InterruptedError, ValidationError } from '../core/errors.js';

const READ_CHUNK_BYTES = 1024 * 1024;

export interface FlagFile {
  flag: string;
  path: string;
  handle: FileHandle;
  isRegular: boolean;
  isCharDevice: boolean;
  size: number;
}

export async function openFlagFile(flag: string, path: string): Promise<FlagFile> {
  let handle: FileHandle;
  try {
    handle = await open(path, 'r');
  } catch (e) {
    throw unreadable(flag, path, e);
  }
  const st = await handle.stat();
  if (st.isDirectory()) {
    await handle.close();
    throw new ValidationError(`${flag} ${path} is a directory`);
  }
  return { flag, path, handle, isRegular: st.isFile(), isCharDevice: st.isCharacterDevice(), size: st.size };
}

/**
 * Reads chunks into `onChunk` until the end, or until it returns false; between chunks, an aborted
 * `signal` stops it with InterruptedError ("stopped reading FLAG PATH: <stopped>").
 */
export async function readChunks(f: FlagFile, onChunk: (chunk: Buffer) => boolean, stop?: { signal: AbortSignal | undefined; stopped: string }): Promise<void> {
  const buf = Buffer.alloc(READ_CHUNK_BYTES);
  for (;;) {
    if (stop?.signal?.aborted) throw new InterruptedError(`stopped reading ${f.flag} ${f.path}: ${stop.stopped}`);
    let n: number;
    try {
      n = (await f.handle.read(buf, 0, buf.length, null)).bytesRead;
    } catch (e) {
      throw unreadable(f.flag, f.path, e);
    }
    if (n === 0 || !onChunk(buf.subarray(0, n))) return;
  }
}

/** The first `max` bytes and more: the caller refuses the file when `total` exceeds `max`. */
export async function readUpTo(f: FlagFile, max: number, stop?: { signal: AbortSignal | undefined; stopped: string }): Promise<{ bytes: Buffer; total: number }> {
  const parts: Buffer[] = [];
  let total = 0;
  await readChunks(f, (chunk) => {
    parts.push(Buffer.from(chunk));
    total += chunk.length;
    return total <= max;
  }, stop);
  return { bytes: Buffer.concat(parts), total };
}

function unreadable(flag: string, path: string, e: unknown): ValidationError {
  return new ValidationError(`${flag} ${path} cannot be read: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
}
