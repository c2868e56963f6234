import { FrameDecoder, Reader, readAclStat, readChildren2, readConnectResponse, readCreate2, readData, readMultiResults, readReplyHeader, readStat, readWatcherEvent } from '../../src/protocol/index.js';
import { ZooKeeperError } from '../../src/protocol/index.js';

/** Every decoder a reply may reach. */
const DECODERS: ((r: Reader) => unknown)[] = [
  readConnectResponse,
  readReplyHeader,
  readStat,
  readCreate2,
  readData,
  readChildren2,
  readAclStat,
  readWatcherEvent,
  readMultiResults,
  (r) => r.strings(),
];

/** A small deterministic PRNG so a failing case can be replayed from its seed. */
export function prng(seed: number): () => number {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>> 0) / 0x1_0000_0000;
  };
}

/** Well-formed sample bodies to mutate. */
function seeds(): Buffer[] {
  const out: Buffer[] = [];
  const b = (...parts: Buffer[]): Buffer => Buffer.concat(parts);
  const int = (v: number): Buffer => {
    const x = Buffer.alloc(4);
    x.writeInt32BE(v);
    return x;
  };
  const long = (v: bigint): Buffer => {
    const x = Buffer.alloc(8);
    x.writeBigInt64BE(v);
    return x;
  };
  const str = (s: string): Buffer => b(int(Buffer.byteLength(s)), Buffer.from(s));
  const stat = b(long(1n), long(2n), long(3n), long(4n), int(5), int(6), int(7), long(8n), int(9), int(10), long(11n));
  out.push(b(int(0), int(4000), long(5n), str('0123456789abcdef'), Buffer.from([0])));
  out.push(b(str('/a/b'), stat));
  out.push(b(int(2), str('x'), str('yy'), stat));
  out.push(b(int(1), int(31), str('world'), str('anyone'), stat));
  out.push(b(int(15), Buffer.from([0]), int(0), str('/p'), stat, int(-1), Buffer.from([1]), int(-1)));
  return out;
}

/**
 * Feeds random and mutated frames to the frame decoder and every record decoder. Any exception
 * other than a ZooKeeperError PROTOCOL_ERROR is a bug (the connection layer turns those into a
 * reconnect; anything else would escape). Returns the number of cases run.
 */
export function fuzz(iterations: number, seed: number): number {
  const random = prng(seed);
  const samples = seeds();
  for (let i = 0; i < iterations; i++) {
    const base = samples[Math.floor(random() * samples.length)]!;
    const bytes = Buffer.from(random() < 0.2 ? randomBytes(random, Math.floor(random() * 64)) : base);
    const mutations = 1 + Math.floor(random() * 4);
    for (let m = 0; m < mutations && bytes.length > 0; m++) bytes[Math.floor(random() * bytes.length)] = Math.floor(random() * 256);
    const cut = random() < 0.3 ? bytes.subarray(0, Math.floor(random() * bytes.length)) : bytes;
    for (const decode of DECODERS) expectOnlyProtocolErrors(() => decode(new Reader(cut)), seed, i);
    const framed = Buffer.alloc(4 + cut.length);
    framed.writeInt32BE(random() < 0.5 ? cut.length : Math.floor(random() * 0x7fffffff) - 0x3fffffff);
    cut.copy(framed, 4);
    expectOnlyProtocolErrors(() => new FrameDecoder(4096).push(framed), seed, i);
  }
  return iterations;
}

function randomBytes(random: () => number, n: number): Buffer {
  const out = Buffer.alloc(n);
  for (let i = 0; i < n; i++) out[i] = Math.floor(random() * 256);
  return out;
}

function expectOnlyProtocolErrors(run: () => unknown, seed: number, iteration: number): void {
  try {
    run();
  } catch (error) {
    if (error instanceof ZooKeeperError && error.code === 'PROTOCOL_ERROR') return;
    throw new Error(`decoder threw a non-protocol error (seed ${seed}, iteration ${iteration})`, { cause: error });
  }
}
