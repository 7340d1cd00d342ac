/**
 * What a command that found nothing says when its `--queue` names a queue the store has never
 * seen. Such a name is most likely a typo, and an empty DLQ under a misspelt queue reads like a
 * clean one (kubectl says "No resources found in typo namespace." for the same reason). Asked only
 * after nothing was found, so a command that found something makes no extra call.
 */
import type { Backend } from '../backend/contract.js';
import { surveyQueues } from '../backend/queue-walk.js';
import { queuesHere } from './parse.js';
import { sanitize } from './output/sanitize.js';

/** The note for `queue`, or null when there is none to give (no queue named, or one the store knows). */
export async function unknownQueueNote(backend: Pick<Backend, 'queues'>, queue: string | null | undefined): Promise<string | null> {
  if (queue === undefined || queue === null) return null;
  const survey = await surveyQueues(backend, queue);
  if (survey.known) return null;
  return `queue ${sanitize(queue)} has never had a job in this store${queuesHere(survey)}`;
}
