import type { ZooKeeperClient, ZooKeeperError } from '../index.js';
import { CliError, messageOf } from './cli-error.js';
import { EXIT } from './exit-codes.js';
import { formatAge } from './timing.js';

/** How often a wait for ZooKeeper says it still waits: often enough that nobody takes it for a hang. */
export const OUTAGE_REMINDER_MS = 10_000;

export interface OutageReportOptions {
  /** The connect string: the hosts we wait for. */
  connect: string;
  /** After an expiry, how long a new session may take before `onGiveUp` (the command's --connect-timeout). */
  renewWithin: number;
  /** Told once no new session came within `renewWithin` of an expiry, with the error to exit on (69). */
  onGiveUp: (error: CliError) => void;
  /** Writes one line to stderr (the caller may have a live line to clear first). */
  say: (line: string) => void;
}

/**
 * Says on stderr what a command waits for while ZooKeeper is out of reach: the connection lost
 * (which hosts it waits for), each new connection error (refused, DNS, TLS), a reminder of how
 * long it has waited every OUTAGE_REMINDER_MS, and the connection back. The client retries by
 * itself and its requests wait silently for it; without this a waiter looks hung. An expired
 * session it gives `renewWithin` to be replaced, then gives up (`onGiveUp`): retrying forever
 * against an ensemble that is gone helps no script.
 */
export class OutageReport implements Disposable {
  /** `Date.now()` when the connection was lost; undefined while connected. */
  private since: number | undefined;
  private lastError: string | undefined;
  private reminder: NodeJS.Timeout | undefined;
  private giveUp: NodeJS.Timeout | undefined;
  private readonly unsubscribe: () => void;
  private readonly onError = (error: Error): void => this.connectionError(error);

  constructor(
    private readonly client: ZooKeeperClient,
    private readonly options: OutageReportOptions,
  ) {
    this.unsubscribe = client.onState((event, reason) => this.changed(event, reason));
    client.on('connectionError', this.onError);
  }

  private changed(event: string, reason: ZooKeeperError | undefined): void {
    const { connect, renewWithin, say } = this.options;
    switch (event) {
      case 'suspended':
        this.lost();
        say(`lost the connection to ZooKeeper (${messageOf(reason)}); waiting for ${connect}`);
        break;
      case 'expired':
        this.lost();
        say(`the session expired (${messageOf(reason)}); waiting for ${connect} to give a new one, at most ${formatAge(renewWithin)} (--connect-timeout), else exit ${EXIT.UNAVAILABLE}`);
        clearTimeout(this.giveUp);
        this.giveUp = setTimeout(() => this.options.onGiveUp(this.giveUpError()), renewWithin);
        this.giveUp.unref();
        break;
      case 'connected':
      case 'reconnected':
        if (this.since !== undefined) say(`connected again to ${this.client.server ?? connect} after ${formatAge(Date.now() - this.since)}${event === 'connected' ? ' (a new session)' : ''}`);
        this.clear();
        break;
      case 'closed':
        this.clear();
        break;
    }
  }

  private lost(): void {
    if (this.since !== undefined) return;
    this.since = Date.now();
    this.reminder = setInterval(() => this.remind(), OUTAGE_REMINDER_MS);
    this.reminder.unref();
  }

  /** Each new cause once (the client retries every host many times a second). */
  private connectionError(error: Error): void {
    const text = messageOf(error);
    if (this.since === undefined || text === this.lastError) return;
    this.lastError = text;
    this.options.say(text);
  }

  private remind(): void {
    if (this.since === undefined) return;
    this.options.say(`no connection to ${this.options.connect} for ${formatAge(Date.now() - this.since)}; last error: ${this.lastError ?? 'none yet'}`);
  }

  private giveUpError(): CliError {
    const last = this.lastError ? `; last error: ${this.lastError}` : '';
    return new CliError(`the session expired and ${this.options.connect} gave no new one within ${formatAge(this.options.renewWithin)} (--connect-timeout)${last}`, EXIT.UNAVAILABLE);
  }

  private clear(): void {
    this.since = undefined;
    this.lastError = undefined;
    clearInterval(this.reminder);
    clearTimeout(this.giveUp);
  }

  [Symbol.dispose](): void {
    this.clear();
    this.unsubscribe();
    this.client.off('connectionError', this.onError);
  }
}
