import assert from 'node:assert/strict';
import net from 'node:net';
import { describe, it } from 'node:test';
import type { ConnectionHandlers } from '../../src/connection/socket/connection.js';
import { Connection } from '../../src/connection/socket/connection.js';
import { openSocket } from '../../src/connection/socket/transport.js';
import type { DecodedFrame, ZooKeeperError } from '../../src/protocol/index.js';

/** A length-prefixed frame holding one byte. */
function frame(value: number): Buffer {
  return Buffer.from([0, 0, 0, 1, value]);
}

/**
 * A Connection over a socket to a local peer that writes `bytes`, then ends the socket; `onFrame`
 * may defer or throw. Resolves with what the handlers heard, once onClose was called (bounded).
 */
async function run(
  bytes: Buffer,
  onFrame: (connection: Connection, value: number, deferredBefore: boolean, socketClosed: boolean) => void,
  open: (port: number) => Promise<net.Socket> = connectPlain,
): Promise<string[]> {
  const heard: string[] = [];
  const peer = net.createServer((socket) => socket.end(bytes));
  await new Promise<void>((resolve) => peer.listen(0, '127.0.0.1', resolve));
  try {
    const socket = await open((peer.address() as net.AddressInfo).port);
    let socketClosed = false;
    socket.once('close', () => (socketClosed = true));
    return await new Promise<string[]>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`onClose not called; heard ${heard.join(', ')}`)), 5000);
      const deferred = new Set<number>();
      const handlers: ConnectionHandlers = {
        onFrame: (f: DecodedFrame) => {
          const value = (f as Buffer)[0]!;
          const again = deferred.has(value);
          heard.push(again ? `frame ${value} again` : `frame ${value}`);
          deferred.add(value);
          onFrame(connection, value, again, socketClosed);
        },
        onIdle: () => undefined,
        onWritable: () => undefined,
        onClose: (reason: ZooKeeperError) => {
          clearTimeout(timer);
          heard.push(`closed: ${reason.code}`);
          resolve(heard);
        },
      };
      const connection = new Connection(socket, handlers, 1024, 'peer');
    });
  } finally {
    peer.close();
  }
}

/** A socket of net's own: its bytes come as 'data' events, each in a buffer of its own. */
async function connectPlain(port: number): Promise<net.Socket> {
  const socket = net.connect(port, '127.0.0.1');
  await new Promise((resolve) => socket.once('connect', resolve));
  return socket;
}

/** A socket as the session opens it: its bytes are lent from the one read buffer the process shares (see takeReads). */
function connectShared(port: number): Promise<net.Socket> {
  return openSocket({ host: '127.0.0.1', port }, 5000, undefined, new AbortController().signal);
}

describe('a connection whose handler defers a frame', () => {
  it('hands the frame and those after it over again a turn later, and reports the socket ended by the peer only after them', async () => {
    const heard = await run(Buffer.concat([frame(1), frame(2), frame(3)]), (connection, value, again) => {
      if (value === 2 && !again) connection.deferFrame();
    });
    assert.deepEqual(heard, ['frame 1', 'frame 2', 'frame 2 again', 'frame 3', 'closed: CONNECTIONLOSS']);
  });

  it('reports the end when a held frame, handled after the peer ended the socket, fails to be handled', async () => {
    const heard = await run(Buffer.concat([frame(1), frame(2), frame(3)]), (connection, value, _again, socketClosed) => {
      // Held until the socket has ended: the frames behind it are handled after that.
      if (value === 1 && !socketClosed) connection.deferFrame();
      if (value === 2) throw new Error('malformed');
    });
    assert.equal(heard.at(-2), 'frame 2');
    assert.equal(heard.at(-1), 'closed: CONNECTIONLOSS', 'the end the socket had, once');
  });

  it('keeps the bytes of a frame held for a later turn when the next reads reuse the shared read buffer', async () => {
    // A first frame of a value found nowhere else, then far more than one read buffer (64 KiB) of
    // frames: it is held until the socket has ended, so every later read lands in the buffer
    // its bytes were read into.
    const values = Array.from({ length: 60_000 }, (_, i) => 1 + (i % 100));
    const heard = await run(
      Buffer.concat([frame(200), ...values.map(frame)]),
      (connection, value, _again, socketClosed) => {
        if (value === 200 && !socketClosed) connection.deferFrame();
      },
      connectShared,
    );
    const values200 = heard.filter((h) => h.startsWith('frame 200'));
    assert.equal(values200.at(-1), 'frame 200 again', 'the held frame, handled last time with its own value');
    // run() says "again" of a value heard before: these values repeat, and no frame but the held one is deferred.
    const rest = heard.filter((h) => !h.startsWith('frame 200') && h.startsWith('frame ')).map((h) => h.replace(' again', ''));
    assert.deepEqual(rest, values.map((v) => `frame ${v}`), 'every later frame once, in order, with its value');
    assert.equal(heard.at(-1), 'closed: CONNECTIONLOSS');
  });
});
