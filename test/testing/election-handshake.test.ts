import assert from 'node:assert/strict';
import { it } from 'node:test';
import { electionAddressRewriter } from '../../src/testing/election-handshake.js';

/** QuorumCnxManager's initial message (protocol V1) from `sid` advertising `address`, then `rest`. */
function initialMessage(sid: number, address: string, rest = ''): Buffer {
  const header = Buffer.alloc(20);
  header.writeBigInt64BE(-65536n, 0);
  header.writeBigInt64BE(BigInt(sid), 8);
  header.writeInt32BE(Buffer.byteLength(address), 16);
  return Buffer.concat([header, Buffer.from(address), Buffer.from(rest)]);
}

it('rewrites the advertised election address even when the message arrives byte by byte', () => {
  const rewrite = electionAddressRewriter('127.0.0.1:2');
  const input = initialMessage(1, '127.0.0.1:65000', 'vote');
  const output = Buffer.concat([...input].map((byte) => rewrite(Buffer.from([byte]))));
  assert.deepEqual(output, initialMessage(1, '127.0.0.1:2', 'vote'));
  assert.deepEqual(rewrite(Buffer.from('more')), Buffer.from('more'), 'then bytes pass unchanged');
});

it('passes a stream that is not an initial message unchanged', () => {
  const oldProtocol = Buffer.alloc(8);
  oldProtocol.writeBigInt64BE(3n, 0);
  assert.deepEqual(electionAddressRewriter('x')(oldProtocol), oldProtocol);
  const garbage = Buffer.alloc(20, 0xff);
  assert.deepEqual(electionAddressRewriter('x')(garbage), garbage);
});
