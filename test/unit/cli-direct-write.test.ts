/**
 * Help and usage errors written straight to the fd (src/cli/output/direct-write.ts):
 * every byte arrives once and in order whatever the fd does (partial writes, a full
 * non-blocking pipe, a reader that went away), and the stream takes over when it must.
 */
import { describe, expect, it } from 'vitest';
import { directWriter, type DirectWriteOptions } from '../../src/cli/output/direct-write.js';

function errno(code: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`${code}: write`), { code });
}

/** An fd whose writes are scripted: each step takes at most `n` bytes, or throws `code`. */
function scriptedFd(steps: Array<number | string>) {
  const fdBytes: number[] = [];
  const streamChunks: Buffer[] = [];
  let created = false;
  let closed = 0;
  const options: DirectWriteOptions = {
    fd: 1,
    stream: () => {
      created = true;
      return { write: (chunk) => (streamChunks.push(Buffer.from(chunk)), true) };
    },
    streamCreated: () => created,
    onClosed: () => void closed++,
    writeSync: (_fd, buffer, offset, length) => {
      const step = steps.length > 0 ? steps.shift()! : Infinity;
      if (typeof step === 'string') throw errno(step);
      const n = Math.min(step, length);
      fdBytes.push(...buffer.subarray(offset, offset + n));
      return n;
    },
  };
  return {
    write: directWriter(options),
    fd: () => Buffer.from(fdBytes).toString('utf8'),
    stream: () => Buffer.concat(streamChunks).toString('utf8'),
    created: () => created,
    closed: () => closed,
    markCreated: () => void (created = true),
  };
}

describe('directWriter', () => {
  it('writes the whole text to the fd and never creates the stream', () => {
    const f = scriptedFd([]);
    f.write('Usage: agentq [options]\n');
    f.write('…ünïcode stays whole\n');
    expect(f.fd()).toBe('Usage: agentq [options]\n…ünïcode stays whole\n');
    expect(f.created()).toBe(false);
  });

  it('a partial write goes on from where the fd stopped (even inside a multi-byte character)', () => {
    const f = scriptedFd([3, 1, 2]);
    f.write('ab…cdef');
    expect(f.fd()).toBe('ab…cdef');
    expect(f.created()).toBe(false);
  });

  it('EINTR is retried', () => {
    const f = scriptedFd(['EINTR', 2]);
    f.write('hello');
    expect(f.fd()).toBe('hello');
  });

  it('a full non-blocking fd (EAGAIN): the rest, and every later write, go through the stream in order', () => {
    const f = scriptedFd([4, 'EAGAIN']);
    f.write('first part');
    f.write(' second');
    expect(f.fd()).toBe('firs');
    expect(f.stream()).toBe('t part second');
    expect(f.fd() + f.stream()).toBe('first part second');
  });

  it('once the stream exists, text goes through it so it cannot overtake what the stream holds', () => {
    const f = scriptedFd([]);
    f.write('a');
    f.markCreated();
    f.write('b');
    expect(f.fd()).toBe('a');
    expect(f.stream()).toBe('b');
  });

  it('EPIPE (the reader went away) calls onClosed and writes nothing more', () => {
    const f = scriptedFd([2, 'EPIPE']);
    f.write('hello');
    expect(f.closed()).toBe(1);
    expect(f.fd()).toBe('he');
    expect(f.created()).toBe(false);
  });

  it('any other error is thrown (the text was not written)', () => {
    const f = scriptedFd(['ENOSPC']);
    expect(() => f.write('hello')).toThrow(/ENOSPC/);
  });
});
