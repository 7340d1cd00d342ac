// Preload (`node --require ./test/support/trace-modules.cjs ...`) that records every module the
// process loads, CommonJS (`require`, which ES-module loader hooks do not see on Node 20) and ES
// modules (`import`, through trace-imports-hooks.mjs), as file URLs into the file named by
// AGENTQ_TRACE_IMPORTS. The CLI runs from a bundle (dist/bundle/*.cjs): a test expands each
// chunk into the modules it holds with dist/bundle/modules.json.
'use strict';
const Module = require('node:module');
const { appendFileSync } = require('node:fs');
const { pathToFileURL } = require('node:url');

const file = process.env.AGENTQ_TRACE_IMPORTS;
if (file) {
  const resolveFilename = Module._resolveFilename;
  Module._resolveFilename = function (request, ...rest) {
    const resolved = resolveFilename.call(this, request, ...rest);
    if (!Module.isBuiltin(resolved)) appendFileSync(file, `${pathToFileURL(resolved).href}\n`);
    return resolved;
  };
  Module.register('./trace-imports-hooks.mjs', pathToFileURL(__filename));
}
