/**
 * Said when `agentq worker` is given its handler command without `--`: the options after the
 * command are then read as the worker's own (`bash -c 'echo hi'` sets --concurrency), so the error
 * names a flag the user never meant. (A module of its own: program.ts loads it on every command.)
 */
export const WORKER_DASH_DASH_HINT =
  "give the handler command after --, e.g. agentq worker --queue Q -- bash -c '…': before it, every option is read as agentq worker's own";

/**
 * The option tokens that come after the handler command on a command line without `--`
 * (`agentq worker --queue research ./agent.sh --quiet` → `--quiet`). Read as the worker's own,
 * they change what it does without a word (`-q other` switches the queue it works on), though
 * they were most likely meant for the handler. `raw`: the arguments after the program name;
 * `takesValue(token)`: whether that option (global or the command's) takes a separate value;
 * `operandsBefore`: the words before the command (1 for `worker`, 3 for `job effect KEY`).
 */
export function optionsAfterCommand(raw: readonly string[], takesValue: (token: string) => boolean, operandsBefore = 1): string[] {
  let i = 0;
  let operands = 0;
  const after: string[] = [];
  for (; i < raw.length; i++) {
    const t = raw[i]!;
    if (t === '--') return [];
    if (t.startsWith('-') && t.length > 1) {
      if (operands > operandsBefore) after.push(t);
      if (!t.includes('=') && takesValue(t)) i++;
      continue;
    }
    // operandsBefore: the words before the command (worker; job effect KEY)
    operands++;
  }
  return after;
}
