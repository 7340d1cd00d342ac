// Preload (`node --import ./test/support/trace-imports.mjs ...`) that records
// every module URL the process resolves into the file named by
// AGENTQ_TRACE_IMPORTS. Used to prove that non-TUI commands never load ink or react.
import { register } from 'node:module';

if (process.env.AGENTQ_TRACE_IMPORTS) register('./trace-imports-hooks.mjs', import.meta.url);
