// Loads bin/agentq.js as the process entry would (for a lone --version, which returns
// before the CLI loads), then emits the AWS SDK's real Node-version warning with the SDK's
// own switch turned off, and one unrelated warning. Used by test/e2e/cli-entry.test.ts.
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const bin = fileURLToPath(new URL('../../bin/agentq.js', import.meta.url));
process.argv = [process.argv[0], bin, '--version'];
process.exit = () => {}; // the entry exits after printing the version; keep going instead
process.stdout.write = () => true;
await import(bin);
delete process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED;
const require = createRequire(import.meta.url);
require('@aws-sdk/core/client').emitWarningIfUnsupportedVersion('v20.1.0');
process.emitWarning('an unrelated warning still shows');
