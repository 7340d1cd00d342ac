// Loaded with `node --import` into the CLI under measurement: at exit, reports
// the process's peak resident set size on stderr (a pipe: written synchronously).
import { writeSync } from 'node:fs';
process.on('exit', () => {
  writeSync(2, `\nagentq-bench-maxrss-kb=${process.resourceUsage().maxRSS}\n`);
});
