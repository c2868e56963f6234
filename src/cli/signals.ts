import { constants } from 'node:os';

export const FORWARDED_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
export type ForwardedSignal = (typeof FORWARDED_SIGNALS)[number];

/** 128 + the signal's number: the shell's code for "ended by this signal". */
export function signalExitCode(signal: NodeJS.Signals): number {
  return 128 + (constants.signals[signal] ?? 0);
}

/** Says why a command stopped before running anything (Ctrl-C leaves no other trace) and returns its exit code. */
export function interrupted(signal: NodeJS.Signals, what: string): number {
  process.stderr.write(`zklock: interrupted by ${signal} while ${what}\n`);
  return signalExitCode(signal);
}

/**
 * Routes SIGINT/SIGTERM/SIGHUP to `handler` while installed; replacing Node's default handling
 * is what lets the CLI remove its lock node instead of dying with it in place.
 */
export class SignalRouter implements Disposable {
  private handler: (signal: ForwardedSignal) => void;
  private readonly listeners = new Map<ForwardedSignal, () => void>();

  constructor(handler: (signal: ForwardedSignal) => void) {
    this.handler = handler;
    for (const signal of FORWARDED_SIGNALS) {
      const listener = (): void => this.handler(signal);
      this.listeners.set(signal, listener);
      process.on(signal, listener);
    }
  }

  /** Switches what a signal does, e.g. from "stop waiting" to "pass it to the child". */
  route(handler: (signal: ForwardedSignal) => void): void {
    this.handler = handler;
  }

  [Symbol.dispose](): void {
    for (const [signal, listener] of this.listeners) process.off(signal, listener);
  }
}

/** An AbortSignal that aborts on SIGINT/SIGTERM/SIGHUP, for commands that only need to stop waiting. */
export function interruptSignal(): { signal: AbortSignal; received: () => ForwardedSignal | undefined } & Disposable {
  const controller = new AbortController();
  let received: ForwardedSignal | undefined;
  const router = new SignalRouter((signal) => {
    received ??= signal;
    controller.abort(new Error(`interrupted by ${signal}`));
  });
  return { signal: controller.signal, received: () => received, [Symbol.dispose]: () => router[Symbol.dispose]() };
}
