import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { ZooKeeperClient } from '../../index.js';
import { ZooKeeperError, requestRevocation } from '../../index.js';
import { messageOf } from '../cli-error.js';
import type { LockModel } from './lock-model.js';

export interface AdminResult {
  status: number;
  message: string;
}

/**
 * The page's admin actions (--allow-admin): a revocation request (Curator's protocol, as `zklock
 * revoke`) and a force release (as `zklock release --force`). Only nodes of locks on show may be
 * named, and each call, done or refused, is logged with who asked.
 */
export class AdminActions {
  /** Made per run and put in the page: a request must show it, and another site cannot read our page to learn it. */
  readonly token = randomBytes(24).toString('hex');

  constructor(
    private readonly client: ZooKeeperClient,
    private readonly model: LockModel,
    private readonly log: (line: string) => void,
  ) {}

  checkToken(given: string | string[] | undefined): boolean {
    if (typeof given !== 'string') return false;
    const [a, b] = [Buffer.from(given), Buffer.from(this.token)];
    return a.length === b.length && timingSafeEqual(a, b);
  }

  async run(action: 'release' | 'revoke', node: string, from: string): Promise<AdminResult> {
    const result = await this.attempt(action, node);
    this.log(`${new Date().toISOString()} admin ${action === 'release' ? 'force release' : 'revocation request'} of ${node} asked from ${from}: ${result.message}`);
    return result;
  }

  private async attempt(action: 'release' | 'revoke', node: string): Promise<AdminResult> {
    const contender = this.model.contender(node);
    if (!contender) return { status: 404, message: 'not a contender of a lock on show (gone already?)' };
    try {
      if (action === 'revoke') {
        return (await requestRevocation(this.client, node)) ? { status: 200, message: `revocation requested (owner ${contender.owner})` } : { status: 404, message: 'already gone' };
      }
      // The node as shown, not one made since under the same name by someone else (a simple lock's fixed path).
      const { stat } = await this.client.getData(node);
      if (`0x${stat.ephemeralOwner.toString(16)}` !== contender.session) return { status: 409, message: 'the node changed owner since the page showed it; nothing deleted' };
      this.model.markForced(node);
      await this.client.delete(node, { version: stat.version });
      return { status: 200, message: `deleted (owner ${contender.owner}, session ${contender.session})` };
    } catch (error) {
      if (error instanceof ZooKeeperError && error.code === 'NONODE') return { status: 404, message: 'already gone' };
      return { status: 502, message: `failed: ${messageOf(error)}` };
    }
  }
}
