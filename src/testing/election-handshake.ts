/*
 * ZooKeeper's leader-election connections (QuorumCnxManager) open with an initial message:
 * int64 protocol version (negative), int64 sid, int32 length, then the sender's own election
 * address ("host:port"). Only a connection from the higher sid to the lower one is kept: when
 * the lower sid dials, the higher one hangs up and dials back *to the address in that message*
 * (3.8 `handleConnection`), not to the one in its own zoo.cfg. Behind link proxies that address
 * would be the sender's real port and the callback would bypass the proxy, so the proxy rewrites
 * it to the address of the proxy for the way back.
 */

const HEADER_BYTES = 8 + 8 + 4;
const VERSION_OFFSET = 0;
const LENGTH_OFFSET = 16;
// QuorumCnxManager's own limit for the address list; anything longer is not a handshake we know.
const MAX_ADDRESS_BYTES = 4096;
const NOTHING = Buffer.alloc(0);

/**
 * A per-connection transform of the dialling member's bytes: holds them back until the initial
 * message is complete, replaces its address with `address`, then passes everything through.
 * A stream that does not start like an initial message (e.g. the pre-3.5 protocol, which sends
 * no address) passes unchanged.
 */
export function electionAddressRewriter(address: string): (chunk: Buffer) => Buffer {
  let head: Buffer | undefined = NOTHING;
  return (chunk) => {
    if (head === undefined) return chunk;
    head = Buffer.concat([head, chunk]);
    if (head.length >= 8 && head.readBigInt64BE(VERSION_OFFSET) >= 0n) return release(head);
    if (head.length < HEADER_BYTES) return NOTHING;
    const length = head.readInt32BE(LENGTH_OFFSET);
    if (length < 0 || length > MAX_ADDRESS_BYTES) return release(head);
    if (head.length < HEADER_BYTES + length) return NOTHING;
    const replacement = Buffer.from(address, 'latin1');
    const prefix = Buffer.from(head.subarray(0, HEADER_BYTES));
    prefix.writeInt32BE(replacement.length, LENGTH_OFFSET);
    return release(Buffer.concat([prefix, replacement, head.subarray(HEADER_BYTES + length)]));
  };

  function release(bytes: Buffer): Buffer {
    head = undefined;
    return bytes;
  }
}
