import net from 'node:net';
import tls from 'node:tls';
import { ZooKeeperError } from '../protocol/index.js';
import type { HostPort } from './connect-string.js';

export type TlsOptions = tls.ConnectionOptions;

/** Opens a TCP (or TLS) socket, failing with CONNECTIONLOSS if it is not up within `timeoutMs`. */
export function openSocket(target: HostPort, timeoutMs: number, tlsOptions?: TlsOptions): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const socket = tlsOptions
      ? tls.connect({ ...tlsOptions, host: target.host, port: target.port })
      : net.connect({ host: target.host, port: target.port });
    const readyEvent = tlsOptions ? 'secureConnect' : 'connect';
    const fail = (cause: unknown): void => {
      clearTimeout(timer);
      socket.destroy();
      reject(
        new ZooKeeperError('CONNECTIONLOSS', `cannot connect to ${target.host}:${target.port}`, {
          zkCode: -4,
          cause,
        }),
      );
    };
    const timer = setTimeout(() => fail(new Error(`connect timeout after ${timeoutMs} ms`)), timeoutMs);
    socket.once('error', fail);
    socket.once(readyEvent, () => {
      clearTimeout(timer);
      socket.off('error', fail);
      socket.setNoDelay(true);
      resolve(socket);
    });
  });
}
