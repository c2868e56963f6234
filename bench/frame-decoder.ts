/**
 * Decode time of one large reply arriving in socket-sized chunks, with no server: the cost of
 * reassembling a frame must grow with its size, not with its size times its number of chunks.
 * `node --import tsx bench/frame-decoder.ts` prints the rows on their own.
 */
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { FrameDecoder } from '../src/protocol/index.js';
import type { Row } from './report.js';

const MIB = 1024 * 1024;
/** What a Node socket hands over per 'data' event on a busy connection. */
const CHUNK_BYTES = 64 * 1024;
const SIZES_MIB = [1, 16] as const;

/** Milliseconds to decode the one frame in `stream`, pushed in CHUNK_BYTES pieces. */
function decodeOnce(stream: Buffer): number {
  const decoder = new FrameDecoder(stream.length);
  let frames = 0;
  const t0 = performance.now();
  for (let at = 0; at < stream.length; at += CHUNK_BYTES) frames += decoder.push(stream.subarray(at, at + CHUNK_BYTES)).length;
  const ms = performance.now() - t0;
  if (frames !== 1) throw new Error(`decoded ${frames} frames from one`);
  return ms;
}

function framed(bodyBytes: number): Buffer {
  const stream = Buffer.alloc(4 + bodyBytes, 7);
  stream.writeInt32BE(bodyBytes, 0);
  return stream;
}

/** One row per frame size: the median of `rounds` decodes (after one untimed decode for the JIT). */
export function frameDecoderRows(rounds: number): Row[] {
  return SIZES_MIB.map((mib) => {
    const stream = framed(mib * MIB);
    decodeOnce(stream);
    const times = Array.from({ length: Math.max(1, rounds) }, () => decodeOnce(stream)).sort((a, b) => a - b);
    const median = times[Math.floor(times.length / 2)]!;
    return {
      group: 'protocol',
      scenario: `decode one ${mib} MiB frame in ${CHUNK_BYTES / 1024} KiB chunks`,
      unit: 'ms',
      better: 'lower',
      samples: { zklock: { value: median, detail: { runsMs: times } } },
    } satisfies Row;
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  for (const row of frameDecoderRows(5)) console.log(`${row.scenario}: ${row.samples.zklock!.value.toFixed(2)} ms`);
}
