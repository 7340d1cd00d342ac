#!/usr/bin/env node
// agentq entry. Plain JavaScript so it runs before anything is compiled or loaded, and
// CommonJS (bin/package.json says so) because an ES-module entry starts Node's ESM loader,
// which alone costs about a tenth of a bare `node` start (see BENCHMARKS.md, Start-up).
// It does only what must happen before the CLI's modules load, then hands over:
//   1. colour: decide once (--color, NO_COLOR, FORCE_COLOR, TERM=dumb, TTY) and
//      publish the decision as FORCE_COLOR, because chalk and Ink read it when
//      they load, chalk ignores NO_COLOR, and chalk mis-reads `--color never`
//      (a bare `--color` in argv) as "force colour";
//   2. EPIPE: `agentq list | head -1` closes the pipe early; a reading command
//      exits quietly instead of printing a stack trace (the handler is added when
//      a stream is created: `--help` writes to the fd and never creates one, see
//      runCli). A command that has started changing state finishes its work and
//      exits with the code it earns; a closed stderr never ends a command;
//   3. the AWS SDK's Node-version maintenance warning is noise for operators;
//   4. lazy load of the built CLI: the bundled start path dist/bundle/agentq.cjs
//      (scripts/build-bundle.mjs), so this file stays tiny (`--version` alone is
//      answered here without loading it; the same text as commander's `--version`,
//      checked by test/e2e/cli-basics.test.ts).
'use strict';
const process = require('node:process');

// ---- 2. EPIPE, on each stream when it is created. Reading process.stdout creates the stream (for
// a pipe or a terminal Node loads its stream and socket modules, about a tenth of `node -e 0`), so
// Node's getter is wrapped, not called: the first read restores it, creates the stream and adds
// the handler. `created` tells runCli whether writing to the fd directly could overtake a stream.
const created = { stdout: false, stderr: false };
// What a gone reader means. On stderr, only that messages cannot be shown: the command goes on, so
// `agentq submit --wait 2>&1 | head -1` still exits 1 for a failed job (it exited 0 here once). On
// stdout, that the output is not wanted: a reading command (`list --all`, `tail --follow`) stops
// with 0, but one that has started changing state (runCli's `mustFinish`, called when a command
// passes its read-only check) must not stop half way — a worker holding leases, a redrive holding
// its lock, `submit --wait` whose code is the job's outcome — so its output is dropped instead.
let stdoutGoneEndsCommand = true;
function quietOnEpipe(stream, name) {
  stream.on('error', (err) => {
    // EIO: the terminal was closed (a hang-up); for the command it is a reader gone, as EPIPE is.
    // A worker stopping on SIGHUP writes its closing lines to a terminal that is no longer there.
    if (err && (err.code === 'EPIPE' || (err.code === 'EIO' && stream.isTTY))) {
      if (name === 'stdout' && stdoutGoneEndsCommand) process.exit(0);
      return;
    }
    throw err;
  });
}
for (const name of ['stdout', 'stderr']) {
  const nodeGetter = Object.getOwnPropertyDescriptor(process, name);
  if (nodeGetter && nodeGetter.configurable && typeof nodeGetter.get === 'function') {
    Object.defineProperty(process, name, {
      configurable: true,
      enumerable: nodeGetter.enumerable,
      get() {
        Object.defineProperty(process, name, nodeGetter);
        const stream = nodeGetter.get.call(process);
        created[name] = true;
        quietOnEpipe(stream, name);
        return stream;
      },
    });
  } else {
    created[name] = true;
    quietOnEpipe(process[name], name);
  }
}
// A terminal without creating the stream: only a character device can be one (node:tty would load
// node:net), and /dev/null is one too, so that case asks tty.
function isTerminal(fd) {
  const name = fd === 1 ? 'stdout' : 'stderr';
  if (created[name]) return process[name].isTTY === true;
  try {
    if (!require('node:fs').fstatSync(fd).isCharacterDevice()) return false;
  } catch {
    return false;
  }
  return require('node:tty').isatty(fd);
}

// The user's own values of what steps 1 and 3 set for agentq itself: the commands get them back
// (runCli's userEnv), so a worker's handlers see the environment the user gave, not FORCE_COLOR
// with agentq's colour decision (a handler on a terminal coloured its stdout, the job's result).
const userEnv = {};
for (const name of ['FORCE_COLOR', 'NO_COLOR', 'AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED', 'DEBUG']) userEnv[name] = process.env[name];
// DEBUG is the `debug` package's switch, which ioredis reads when it loads: DEBUG=* (left set for
// another tool) had it write every Redis command to stderr, AUTH with its password in clear, while
// agentq redacts credentials everywhere it prints. agentq's own switch is --debug / AGENTQ_DEBUG.
delete process.env.DEBUG;

// ---- 3. the AWS SDK's "will require node >=N" warning: the SDK's own switch first, and a
// filter for the wording of other SDK versions (only warnings that are about the AWS SDK and
// a Node version are dropped; every other warning is printed as usual).
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
const emitWarning = process.emitWarning.bind(process);
process.emitWarning = (warning, ...rest) => {
  const text = typeof warning === 'string' ? warning : warning && warning.message;
  if (typeof text === 'string' && /AWS SDK for JavaScript/i.test(text) && /node\s*>=?\s*v?\d|NodeVersionSupportWarning|NodeDeprecationWarning|support(ing)? (for )?Node/i.test(text)) return;
  // The code cache (code-cache.js) lets a cached chunk use import() through this vm option,
  // which Node 20 calls experimental; an operator can do nothing about it.
  if (typeof text === 'string' && text.includes('vm.USE_MAIN_CONTEXT_DEFAULT_LOADER')) return;
  return emitWarning(warning, ...rest);
};

// ---- 1. colour
function colourWhen(argv) {
  let when = 'auto';
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--') break;
    if (a === '--no-color') when = 'never';
    else if (a === '--color') {
      const next = argv[i + 1];
      when = next === 'auto' || next === 'always' || next === 'never' ? next : 'always';
    } else if (a.startsWith('--color=')) when = a.slice('--color='.length);
  }
  return when;
}

// ---- fast path: `agentq --version` needs neither commander nor the CLI modules.
const args = process.argv.slice(2);
if (args.length === 1 && (args[0] === '--version' || args[0] === '-V')) {
  const { readFileSync } = require('node:fs');
  const { version } = JSON.parse(readFileSync(require('node:path').join(__dirname, '..', 'package.json'), 'utf8'));
  // To fd 1 without creating process.stdout (see 2.), as runCli does for help: the stream takes
  // the rest only if the fd takes less (a full non-blocking pipe); a gone reader exits quietly.
  const line = Buffer.from(`agentq ${version} (node ${process.version})\n`);
  let written = 0;
  try {
    written = require('node:fs').writeSync(1, line);
  } catch (err) {
    if (err.code === 'EPIPE') process.exit(0);
    if (err.code !== 'EAGAIN') throw err;
  }
  if (written < line.length) process.stdout.write(line.subarray(written));
  process.exit(0);
}

const bundleDir = require('node:path').join(__dirname, '..', 'dist', 'bundle');
const bundle = require('node:path').join(bundleDir, 'agentq.cjs');
require('./code-cache.js').install(bundleDir);
let cli;
try {
  cli = require(bundle);
} catch (err) {
  // Only the bundle itself missing means "not built"; anything it fails to load is an error to show.
  if (err && err.code === 'MODULE_NOT_FOUND' && !require('node:fs').existsSync(bundle)) {
    process.stderr.write('agentq is not built yet: run `npm run build` (or `npm ci`, which builds it) first.\n');
    process.exit(1);
  }
  throw err;
}
{
  const level = cli.resolveColourLevel({
    when: colourWhen(process.argv.slice(2)),
    env: process.env,
    isTTY: isTerminal(1),
  });
  process.env.FORCE_COLOR = String(level);
  // FORCE_COLOR now carries the decision; keeping NO_COLOR too only makes newer Node versions warn in child processes.
  if (level === 0) delete process.env.NO_COLOR;
}
cli.runCli(process.argv.slice(2), {
  created: (name) => created[name],
  isTerminal,
  mustFinish: () => {
    stdoutGoneEndsCommand = false;
  },
  userEnv,
});
