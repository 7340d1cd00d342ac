// V8 code cache for the bundled CLI (dist/bundle/*.cjs): compiling the bundle's JavaScript is a
// large share of `agentq --help` and `agentq inspect` (Node 20 has no module compile cache of its
// own; `module.enableCompileCache` came in Node 22). `npm run build` runs a few commands with
// AGENTQ_WRITE_CODE_CACHE=1 (scripts/build-bundle.mjs) and keeps, next to each chunk, the code
// V8 compiled for it (`<chunk>.v8cache`). At run time each chunk is compiled with its cache;
// V8 checks that the cache fits the source, the V8 version and the flags, and simply compiles
// from source when it does not (another Node version, a rebuilt chunk), so a stale or foreign
// cache costs a file read, never correctness. Only files in the bundle directory are affected.
'use strict';
const Module = require('node:module');
const fs = require('node:fs');
const path = require('node:path');
const vm = require('node:vm');

function install(bundleDir) {
  // import() inside a vm.Script needs this loader option (Node >= 20.10); without it, no cache.
  const importModuleDynamically = vm.constants && vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER;
  if (!importModuleDynamically) return;
  const writing = process.env.AGENTQ_WRITE_CODE_CACHE === '1';
  const compiled = [];
  const prefix = bundleDir + path.sep;
  const compile = Module.prototype._compile;
  Module.prototype._compile = function (content, filename) {
    if (!filename.startsWith(prefix) || !filename.endsWith('.cjs')) return compile.call(this, content, filename);
    const cacheFile = `${filename}.v8cache`;
    let cachedData;
    try {
      cachedData = fs.readFileSync(cacheFile);
    } catch {
      cachedData = undefined;
    }
    const script = new vm.Script(Module.wrap(content), { filename, cachedData, importModuleDynamically });
    if (writing) compiled.push([script, cacheFile]);
    const mod = this;
    const require = (id) => mod.require(id);
    require.resolve = (request, options) => Module._resolveFilename(request, mod, false, options);
    require.cache = Module._cache;
    require.main = process.mainModule;
    const wrapper = script.runInThisContext({ displayErrors: true });
    return wrapper.call(mod.exports, mod.exports, require, mod, filename, path.dirname(filename));
  };
  // Build only: after the command, V8's code for each chunk, including the functions this run
  // compiled on top of an existing cache (so several warm-up commands add up).
  if (writing) process.on('exit', () => {
    for (const [script, cacheFile] of compiled) {
      // Whole or not at all: a reader never sees a half-written cache.
      const tmp = `${cacheFile}.${process.pid}.tmp`;
      fs.writeFileSync(tmp, script.createCachedData());
      fs.renameSync(tmp, cacheFile);
    }
  });
}

module.exports = { install };
