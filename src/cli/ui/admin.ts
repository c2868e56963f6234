import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { ZooKeeperClient } from '../../index.js';
import { ZooKeeperError, requestRevocation } from '../../index.js';
import { messageOf } from '../cli-error.js';
import type { LockModel } from './lock-model.js';
import { hexId } from '../../client/diagnostics.js';

export type AdminAction = 'release' | 'revoke';

export interface AdminResult {
  status: number;
  message: string;
}

/** Compares a secret someone sent with ours in constant time. */
export function sameSecret(given: string, secret: string): boolean {
  const [a, b] = [Buffer.from(given), Buffer.from(secret)];
  return a.length === b.length && timingSafeEqual(a, b);
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
    return typeof given === 'string' && sameSecret(given, this.token);
  }

  async run(action: AdminAction, node: string, from: string): Promise<AdminResult> {
    const result = await this.attempt(action, node);
    this.logRequest(action, node, from, result);
    return result;
  }

  /**
   * One line per request, done or refused. Node paths and owners are other people's bytes:
   * JSON-quoted, so a newline or an escape sequence in them cannot forge or hide a line.
   */
  logRequest(action: AdminAction, node: string | undefined, from: string, result: AdminResult): void {
    const what = action === 'release' ? 'force release' : 'revocation request';
    this.log(`${new Date().toISOString()} admin ${what} of ${node === undefined ? '(no node)' : JSON.stringify(node)} asked from ${from}: ${result.status} ${result.message}`);
  }

  private async attempt(action: AdminAction, node: string): Promise<AdminResult> {
    const shown = this.model.contender(node);
    if (!shown) return { status: 404, message: 'not a contender of a lock on show (gone already?)' };
    const { contender, kind } = shown;
    const owner = JSON.stringify(contender.owner);
    try {
      if (action === 'revoke') {
        // Neither a semaphore nor a simple lock listens for revocation requests (the page offers none).
        if (kind === 'semaphore' || kind === 'simple') return { status: 409, message: `a ${kind} lock's holders do not take revocation requests; nothing sent` };
        return (await requestRevocation(this.client, node)) ? { status: 200, message: `revocation requested (owner ${owner})` } : { status: 404, message: 'already gone' };
      }
      // The node as shown, not one made since under the same name by someone else (a simple lock's fixed path).
      const { stat } = await this.client.getData(node);
      if (hexId(stat.ephemeralOwner) !== contender.session) return { status: 409, message: 'the node changed owner since the page showed it; nothing deleted' };
      // Marked before the delete: the watch event of the delete may be read before the reply comes.
      this.model.markForced(node);
      try {
        await this.client.delete(node, { version: stat.version });
      } catch (error) {
        this.model.markForced(node, false);
        throw error;
      }
      return { status: 200, message: `deleted (owner ${owner}, session ${contender.session})` };
    } catch (error) {
      if (error instanceof ZooKeeperError && error.code === 'NONODE') return { status: 404, message: 'already gone' };
      return { status: 502, message: `failed: ${messageOf(error)}` };
    }
  }
}
