/**
 * Optional timing trace for the benchmark (`AGENTQ_TUI_TRACE=FILE`): one
 * NDJSON line per frame Ink writes, with the time since the process started
 * and, when the frame answers a key, the time since that key arrived; with
 * the process's CPU time (user + system) so far, the figure that a busy
 * machine distorts least. It measures the app's own key-to-frame cost, apart
 * from the terminal's.
 */
import { appendFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';

export interface FrameTrace {
  keyReceived(): void;
  frameWritten(): void;
}

export function fileTrace(path: string): FrameTrace {
  let keyAt: number | null = null;
  let frames = 0;
  return {
    keyReceived() {
      keyAt ??= performance.now();
    },
    frameWritten() {
      const now = performance.now();
      frames++;
      // performance.now() counts from the process's start (timeOrigin): the first line is time to first frame.
      const cpu = process.cpuUsage();
      appendFileSync(
        path,
        JSON.stringify({ frame: frames, sinceStartMs: +now.toFixed(2), cpuMs: Math.round((cpu.user + cpu.system) / 1000), keyToFrameMs: keyAt === null ? null : +(now - keyAt).toFixed(2) }) + '\n',
      );
      keyAt = null;
    },
  };
}
