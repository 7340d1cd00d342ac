/**
 * The rules for queue, tenant and workflow names, without zod: the schemas build on them, and a
 * command that only checks a flag (`list --queue`) need not load zod on its start path.
 */

/** Queue, tenant and key names: printable, bounded, no separators that break key layouts. */
export const NAME_RULE = 'must be 1-128 characters of letters, digits and . _ - (starting with a letter or digit)';
export const NAME_RE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

export const WORKFLOW_RULE = 'must look like name:vN, e.g. research_report:v3';
export const WORKFLOW_RE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}:v\d{1,6}$/;
