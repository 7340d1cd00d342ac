import { AgentqError } from '../../core/errors.js';
import type { CommandContext } from '../context.js';

export async function run(_opts: Record<string, unknown>, _ctx: CommandContext): Promise<void> {
  throw new AgentqError('NOT_IMPLEMENTED', 'demo is being written right now', 1);
}
