/**
 * AWS credentials for the wire client (wire.ts) without loading the SQS SDK
 * client: the SDK's default chain (`@aws-sdk/credential-provider-node`'s
 * `defaultProvider`, what an `SQSClient` itself uses), imported only when it
 * is needed. Never from flags or the URL.
 *
 * The chain's first link is done here directly: when AWS_PROFILE is not set
 * and AWS_ACCESS_KEY_ID + AWS_SECRET_ACCESS_KEY are, the chain returns exactly
 * those environment variables (credential-provider-env's `fromEnv`), and
 * loading the chain for that costs ~70 ms of CPU (all its providers, SSO, STS
 * and INI parsing included) in a CLI run of ~2 s. Every other case (profiles,
 * SSO, web identity, container and instance metadata) goes to the chain.
 */
import { sanitize } from '../../cli/output/sanitize.js';
import type { SigningIdentity } from './sigv4.js';

export interface Identity extends SigningIdentity {
  expiration?: Date;
}

export type IdentityProvider = () => Promise<Identity>;

/** The default credential chain for a client of this region (the region is what the chain's STS/SSO clients inherit). */
export function defaultCredentials(region: string, env: NodeJS.ProcessEnv = process.env): IdentityProvider {
  let chain: Promise<IdentityProvider> | null = null;
  return async () => {
    const fromEnv = envCredentials(env);
    if (fromEnv) return fromEnv;
    chain ??= import('@aws-sdk/credential-provider-node').then(
      // As the SQS client calls it: the client's config as parentClientConfig (only the region matters to the chain).
      (m) => m.defaultProvider({ parentClientConfig: { region }, logger: SDK_LOGGER }) as IdentityProvider,
      (e: unknown) => {
        chain = null;
        throw e;
      },
    );
    return (await chain)();
  };
}

/** The chain's `fromEnv` link, skipped (as the chain does) when AWS_PROFILE is set. */
export function envCredentials(env: NodeJS.ProcessEnv): Identity | null {
  if (env.AWS_PROFILE) return null;
  const accessKeyId = env.AWS_ACCESS_KEY_ID;
  const secretAccessKey = env.AWS_SECRET_ACCESS_KEY;
  if (!accessKeyId || !secretAccessKey) return null;
  const sessionToken = env.AWS_SESSION_TOKEN;
  const expiry = env.AWS_CREDENTIAL_EXPIRATION;
  return { accessKeyId, secretAccessKey, ...(sessionToken ? { sessionToken } : {}), ...(expiry ? { expiration: new Date(expiry) } : {}) };
}

/**
 * The AWS SDK's own warnings in agentq's words and format, each once per process: the SDK prints
 * them with console.warn, raw and over several lines, between agentq's lines (and into a `-o json`
 * run's stderr). Its debug and info lines are dropped, as with no logger; errors reach agentq as
 * the errors the calls throw.
 */
const saidWarnings = new Set<string>();
export const SDK_LOGGER = {
  debug: (): void => {},
  info: (): void => {},
  error: (): void => {},
  warn: (...args: unknown[]): void => {
    const text = args.map((a) => (typeof a === 'string' ? a : a instanceof Error ? a.message : String(a))).join(' ');
    const line = /Multiple credential sources detected/.test(text)
      ? 'both AWS_PROFILE and AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY are set: the AWS SDK uses the profile (set only one of them)'
      : `AWS SDK: ${oneLine(text)}`;
    if (saidWarnings.has(line)) return;
    saidWarnings.add(line);
    process.stderr.write(`warning: ${line}\n`);
  },
};

/** Whitespace runs (line breaks included) as one space, the rest through the sanitiser, at most 300 characters. */
function oneLine(text: string): string {
  const flat = sanitize(text.replace(/\s+/g, ' ').trim());
  return flat.length > 300 ? `${flat.slice(0, 299)}…` : flat;
}
