/**
 * The AWS SDK's credential chain warns, with console.warn over nine lines, when both AWS_PROFILE and
 * an access key pair are set. agentq says it once, on one line, in its own format (the wire
 * client's chain and the SDK client's alike), and the credentials still resolve as the SDK decides.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { defaultCredentials, SDK_LOGGER } from '../../src/backend/sqs/credentials.js';

const VARS = ['AWS_PROFILE', 'AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'AWS_CONFIG_FILE', 'AWS_SHARED_CREDENTIALS_FILE', 'AWS_EC2_METADATA_DISABLED'] as const;
let dir: string;
let saved: Record<string, string | undefined>;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'agentq-creds-'));
  saved = Object.fromEntries(VARS.map((k) => [k, process.env[k]]));
  writeFileSync(join(dir, 'credentials'), '[ops]\naws_access_key_id = AKIDPROFILE\naws_secret_access_key = from-profile\n');
  writeFileSync(join(dir, 'config'), '');
  Object.assign(process.env, {
    AWS_PROFILE: 'ops',
    AWS_ACCESS_KEY_ID: 'AKIDENV',
    AWS_SECRET_ACCESS_KEY: 'from-env',
    AWS_SHARED_CREDENTIALS_FILE: join(dir, 'credentials'),
    AWS_CONFIG_FILE: join(dir, 'config'),
    AWS_EC2_METADATA_DISABLED: 'true',
  });
});
afterEach(() => {
  for (const k of VARS) {
    if (saved[k] === undefined) delete process.env[k];
    else process.env[k] = saved[k];
  }
  vi.restoreAllMocks();
  rmSync(dir, { recursive: true, force: true });
});

describe('the credential chain with AWS_PROFILE and an access key pair both set', () => {
  it('warns once, on one line, in agentq\'s format; nothing goes to console.warn; the profile is used', async () => {
    const warned = vi.spyOn(console, 'warn').mockImplementation(() => {});
    const written: string[] = [];
    vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => (written.push(String(chunk)), true));
    const first = await defaultCredentials('us-east-1')();
    const again = await defaultCredentials('us-east-1')();
    expect(first.accessKeyId).toBe('AKIDPROFILE');
    expect(again.accessKeyId).toBe('AKIDPROFILE');
    expect(warned).not.toHaveBeenCalled();
    expect(written).toEqual(['warning: both AWS_PROFILE and AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY are set: the AWS SDK uses the profile (set only one of them)\n']);
  });
});

describe('the SDK\'s other warnings', () => {
  it('come out as one warning line each, once, through the sanitiser', () => {
    const written: string[] = [];
    vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => (written.push(String(chunk)), true));
    SDK_LOGGER.warn('first line\n    second \x1b]0;title\x07 line');
    SDK_LOGGER.warn('first line\n    second \x1b]0;title\x07 line');
    expect(written).toEqual(['warning: AWS SDK: first line second \\x1b]0;title\\x07 line\n']);
  });
});
