import assert from 'node:assert/strict';
import net from 'node:net';
import { describe, it } from 'node:test';
import type { ConnectionHandlers } from '../../src/connection/socket/connection.js';
import { Connection } from '../../src/connection/socket/connection.js';
import type { DecodedFrame, ZooKeeperError } from '../../src/protocol/index.js';

/** A length-prefixed frame holding one byte. */
function frame(value: number): Buffer {
  return Buffer.from([0, 0, 0, 1, value]);
}

/**
 * A Connection over a socket to a local peer that writes `bytes`, then ends the socket; `onFrame`
 * may defer or throw. Resolves with what the handlers heard, once onClose was called (bounded).
 */
async function run(bytes: Buffer, onFrame: (connection: Connection, value: number, deferredBefore: boolean, socketClosed: boolean) => void): Promise<string[]> {
  const heard: string[] = [];
  const peer = net.createServer((socket) => socket.end(bytes));
  await new Promise<void>((resolve) => peer.listen(0, '127.0.0.1', resolve));
  try {
    const socket = net.connect((peer.address() as net.AddressInfo).port, '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
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
});
