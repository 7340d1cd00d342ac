// Loaded with `node --import` into the CLI under measurement: at exit, reports
// the process's peak resident set size and CPU time on stderr (a pipe: written
// synchronously). CPU time lets a result be read on a busy machine, where
// wall-clock time mostly measures the other processes.
import { writeSync } from 'node:fs';
process.on('exit', () => {
  const u = process.resourceUsage();
  writeSync(2, `\nagentq-bench-maxrss-kb=${u.maxRSS} agentq-bench-cpu-us=${u.userCPUTime + u.systemCPUTime}\n`);
});
