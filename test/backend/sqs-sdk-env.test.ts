/**
 * agentq used as a library leaves the host application's environment alone: creating the AWS
 * SDK client no longer sets AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED in the caller's
 * process (a host that wants the SDK's Node-version warning gone sets it itself). The CLI keeps
 * its own output free of the warning in bin/agentq.js (test/backend/sqs-cli.test.ts,
 * test/e2e/cli-entry.test.ts).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createSqsClient } from '../../src/backend/sqs/sdk.js';

const NAME = 'AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED';
let saved: string | undefined;
beforeEach(() => {
  saved = process.env[NAME];
  delete process.env[NAME];
});
afterEach(() => {
  if (saved === undefined) delete process.env[NAME];
  else process.env[NAME] = saved;
});

describe('the SDK client as a library makes it', () => {
  it("does not set the SDK's warning switch in the host's environment", () => {
    const client = createSqsClient({ region: 'us-east-1', endpoint: 'http://127.0.0.1:9' });
    try {
      expect(process.env[NAME]).toBeUndefined();
    } finally {
      client.destroy();
    }
  });

  it("keeps the host's own value", () => {
    process.env[NAME] = 'false';
    const client = createSqsClient({ region: 'us-east-1', endpoint: null });
    client.destroy();
    expect(process.env[NAME]).toBe('false');
  });
});
