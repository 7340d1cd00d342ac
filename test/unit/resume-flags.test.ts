import { afterEach, describe, expect, it } from 'vitest';
import { resumeTargetOf, shellWord } from '../../src/cli/resume-flags.js';
import { setResumeTarget } from '../../src/core/resume-target.js';
import { resumeCommand } from '../../src/dlq/engine.js';

afterEach(() => setResumeTarget(null));

const run = { run_id: 'run_01J0000000000000000000000X', action: 'redrive' as const };

describe('the printed resume command names the store the command used', () => {
  it('with no --context / --url (environment or default store) it is the bare command', () => {
    expect(resumeCommand(run)).toBe('agentq dlq redrive --resume run_01J0000000000000000000000X');
  });

  it('carries --context and --url as given, shell-quoted when needed', () => {
    setResumeTarget(resumeTargetOf({ context: 'prod' }));
    expect(resumeCommand(run)).toBe('agentq --context prod dlq redrive --resume run_01J0000000000000000000000X');
    setResumeTarget(resumeTargetOf({ url: 'sqlite:/tmp/my dir/agentq.db' }));
    expect(resumeCommand(run)).toBe("agentq --url 'sqlite:/tmp/my dir/agentq.db' dlq redrive --resume run_01J0000000000000000000000X");
    expect(resumeCommand({ run_id: 'run_Y', action: 'purge' }, resumeTargetOf({ context: "o'neil" }))).toBe("agentq --context 'o'\\''neil' dlq purge --resume run_Y");
  });

  it('never prints a password: the URL is redacted and the note says what to do', () => {
    setResumeTarget(resumeTargetOf({ url: 'redis://ops:s3cret@redis.internal:6379/0' }));
    const cmd = resumeCommand(run);
    expect(cmd).not.toContain('s3cret');
    expect(cmd).toContain("--url 'redis://ops:***@redis.internal:6379/0' dlq redrive --resume");
    expect(cmd).toContain('*** stands for the credentials in --url, not printed');
  });

  it('quotes only what a shell would split or expand', () => {
    expect(shellWord('redis://h:6379/0')).toBe('redis://h:6379/0');
    expect(shellWord('a$b')).toBe("'a$b'");
  });
});
