/**
 * Commander's own text (help, usage errors) written straight to fd 1 or 2 with
 * `fs.writeSync`, so that `agentq --help` never creates `process.stdout`: for a
 * pipe Node builds a socket stream for it and loads its stream and socket
 * modules, about a tenth of a bare `node` start (BENCHMARKS.md, Start-up).
 *
 * The stream stays the writer whenever the fd cannot simply take the text:
 * - once the stream exists, every write goes through it, so no text overtakes
 *   what the stream still holds;
 * - EAGAIN (a non-blocking pipe or terminal that is full): the rest goes to the
 *   stream, which waits for the reader, and so does every later write;
 * - EPIPE (the reader went away): `onClosed`, the same quiet exit the entry's
 *   stream error handler makes (`agentq --help | head -1`).
 * Any other error is thrown to the caller, as the text could not be written.
 */
import { writeSync as fsWriteSync } from 'node:fs';

export interface DirectWriteOptions {
  fd: number;
  /** The stream for the same fd (creating it on first call). */
  stream: () => { write(chunk: string | Uint8Array): boolean };
  /** Whether the stream exists already (something else wrote through it). */
  streamCreated: () => boolean;
  /** The reader is gone (EPIPE). */
  onClosed: () => void;
  /** `fs.writeSync` (tests inject partial writes and errors). */
  writeSync?: (fd: number, buffer: Uint8Array, offset: number, length: number) => number;
}

export function directWriter(o: DirectWriteOptions): (text: string) => void {
  const writeSync = o.writeSync ?? fsWriteSync;
  let viaStream = false;
  return (text) => {
    if (viaStream || o.streamCreated()) {
      viaStream = true;
      o.stream().write(text);
      return;
    }
    const bytes = Buffer.from(text, 'utf8');
    let offset = 0;
    while (offset < bytes.length) {
      try {
        offset += writeSync(o.fd, bytes, offset, bytes.length - offset);
      } catch (e) {
        const code = (e as NodeJS.ErrnoException).code;
        if (code === 'EINTR') continue;
        if (code === 'EAGAIN' || code === 'EWOULDBLOCK') {
          viaStream = true;
          o.stream().write(bytes.subarray(offset));
          return;
        }
        if (code === 'EPIPE') {
          o.onClosed();
          return;
        }
        throw e;
      }
    }
  };
}
