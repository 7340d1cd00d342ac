/** The entry file's own duties that the other e2e tests do not reach. */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../support/cli.js';

describe('bin/agentq.js', () => {
  it('drops the AWS SDK Node-version warning (even with the SDK switch off) and keeps other warnings', () => {
    const r = spawnSync(process.execPath, [join(REPO_ROOT, 'test', 'support', 'entry-warning-probe.mjs')], { cwd: REPO_ROOT, encoding: 'utf8' });
    expect(r.status).toBe(0);
    expect(r.stderr).toContain('an unrelated warning still shows');
    expect(r.stderr).not.toContain('AWS SDK');
  });

  it('the SDK warning is real without the entry (the probe can fail)', () => {
    const r = spawnSync(process.execPath, ['-e', "require('@aws-sdk/core/client').emitWarningIfUnsupportedVersion('v20.1.0')"], { cwd: REPO_ROOT, encoding: 'utf8', env: { PATH: process.env.PATH } });
    expect(r.stderr).toContain('AWS SDK for JavaScript');
  });
});
