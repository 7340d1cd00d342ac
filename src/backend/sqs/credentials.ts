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
      (m) => m.defaultProvider({ parentClientConfig: { region } }) as IdentityProvider,
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
