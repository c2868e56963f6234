import * as net from 'node:net';
import * as tls from 'node:tls';
import { ZooKeeperError } from '../../protocol/index.js';
import type { HostPort } from '../hosts/connect-string.js';

export type TlsOptions = tls.ConnectionOptions;

/**
 * Opens a TCP (or TLS) socket, failing with CONNECTIONLOSS if it is not up within `timeoutMs`,
 * and at once (socket destroyed, timer cleared) when `signal` aborts: a client closed while
 * connecting leaves nothing behind.
 */
export function openSocket(target: HostPort, timeoutMs: number, tlsOptions: TlsOptions | undefined, signal: AbortSignal): Promise<net.Socket> {
  if (signal.aborted) return Promise.reject(new ZooKeeperError('CLOSED', 'client closed while connecting'));
  return new Promise((resolve, reject) => {
    const socket = tlsOptions
      ? tls.connect({ ...tlsOptions, host: target.host, port: target.port })
      : net.connect({ host: target.host, port: target.port });
    const readyEvent = tlsOptions ? 'secureConnect' : 'connect';
    const settle = (): void => {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
    };
    const fail = (cause: unknown): void => {
      settle();
      socket.destroy();
      reject(
        new ZooKeeperError('CONNECTIONLOSS', `cannot connect to ${target.host}:${target.port}`, {
          zkCode: -4,
          cause,
        }),
      );
    };
    const onAbort = (): void => {
      settle();
      socket.destroy();
      reject(new ZooKeeperError('CLOSED', 'client closed while connecting'));
    };
    const timer = setTimeout(() => fail(new Error(`connect timeout after ${timeoutMs} ms`)), timeoutMs);
    signal.addEventListener('abort', onAbort, { once: true });
    socket.once('error', fail);
    socket.once(readyEvent, () => {
      settle();
      socket.off('error', fail);
      socket.setNoDelay(true);
      resolve(socket);
    });
  });
}
