// Preloaded into each measured process by bench/startup.mjs (`node --require`): reports the
// process's own CPU time (user + system, microseconds) on stderr when it exits. CPU time is a
// steadier figure than wall time on a busy machine, where wall time also counts waiting for a core.
process.on('exit', () => {
  const { user, system } = process.cpuUsage();
  process.stderr.write(`\n@@cpu ${user} ${system}\n`);
});
