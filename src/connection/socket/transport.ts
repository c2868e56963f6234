import * as net from 'node:net';
import * as tls from 'node:tls';
import { ZooKeeperError } from '../../protocol/index.js';
import type { HostPort } from '../hosts/connect-string.js';

export type TlsOptions = tls.ConnectionOptions;

/**
 * What a plain TCP socket opened here reads into: one buffer for every such socket of the
 * process (net's `onread`), where Node would otherwise allocate a buffer for every read and pass
 * it through the stream machinery ('data'), a cost paid per read, so per reply while a busy server
 * answers one request at a time. One buffer serves them all because a read's bytes are handled
 * within its callback: what a socket's reader keeps beyond it (a frame cut by the end of the
 * read, a frame held for a later turn) it copies first (see Connection.onData), and nothing reads
 * again before the callback returns (the event loop runs one callback at a time).
 */
const READ_BUFFER_BYTES = 64 * 1024;
let readBuffer: Buffer | undefined;
/** The sockets that read into it, each with the reader its bytes go to (none yet: they are emitted as 'data', a copy, as any socket's). */
const readers = new WeakMap<net.Socket, ((bytes: Buffer) => void) | undefined>();

/** net's onread callback, called with the socket as `this`; true: go on reading. */
function onRead(this: net.Socket, nread: number, buffer: Uint8Array): boolean {
  const bytes = Buffer.from(buffer.buffer, buffer.byteOffset, nread);
  const reader = readers.get(this);
  if (reader) reader(bytes);
  else this.emit('data', Buffer.from(bytes));
  return true;
}

/**
 * Hands `socket`'s bytes to `reader` as views of the shared read buffer, valid only until it
 * returns, instead of as 'data' events; false for a socket not opened here over plain TCP (a TLS
 * one), whose bytes come as 'data' events of their own.
 */
export function takeReads(socket: net.Socket, reader: (bytes: Buffer) => void): boolean {
  if (!readers.has(socket)) return false;
  readers.set(socket, reader);
  return true;
}

/**
 * Opens a TCP (or TLS) socket, failing with CONNECTIONLOSS if it is not up within `timeoutMs`,
 * and at once (socket destroyed, timer cleared) when `signal` aborts: a client closed while
 * connecting leaves nothing behind.
 */
export function openSocket(target: HostPort, timeoutMs: number, tlsOptions: TlsOptions | undefined, signal: AbortSignal): Promise<net.Socket> {
  if (signal.aborted) return Promise.reject(new ZooKeeperError('CLOSED', 'client closed while connecting'));
  return new Promise((resolve, reject) => {
    let socket: net.Socket;
    if (tlsOptions) socket = tls.connect({ ...tlsOptions, host: target.host, port: target.port });
    else {
      readBuffer ??= Buffer.allocUnsafe(READ_BUFFER_BYTES);
      socket = net.connect({ host: target.host, port: target.port, onread: { buffer: readBuffer, callback: onRead } });
      readers.set(socket, undefined);
    }
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
