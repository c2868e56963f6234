import type { CallOptions, DataResult, ZooKeeperClient } from '../../client/index.js';
import { ZooKeeperError } from '../../client/index.js';
import { isTransient } from './transient.js';

/** Clients whose server answered multiRead UNIMPLEMENTED (ZooKeeper 3.5): asked again, it would close the connection again. */
const withoutMultiRead = new WeakSet<ZooKeeperClient>();

/** What one read of `readEach` answers: the node's data, or why not (NONODE, NOAUTH). */
export type EachRead = DataResult | ZooKeeperError;

/**
 * The data of each of `paths`, in one round trip: a multiRead (ZooKeeper 3.6+) or, on a server
 * without it, one getData per path, pipelined. A 3.5 server answers multiRead UNIMPLEMENTED and
 * closes the connection (the session lives on): the client remembers that for its life and asks
 * with getData from then on. The reads that follow the refusal may go out on the connection being
 * closed: they are sent once more when the client is connected again. Past that, a lost
 * connection rejects as for any read (CONNECTIONLOSS), which the callers ride out as they do
 * elsewhere, with what they know intact.
 *
 * Either way each result stands alone: not one snapshot (pipelined reads may straddle a write,
 * and nothing says a multiRead does not). Callers rely only on facts that stay true once seen (a
 * contender gone, a downgrade marker) or report a moment's view (inspection).
 * A read's own refusal (NONODE, NOAUTH) is its result; any other failure rejects the whole.
 */
export async function readEach(client: ZooKeeperClient, paths: readonly string[], options: CallOptions = {}): Promise<EachRead[]> {
  if (!withoutMultiRead.has(client)) {
    try {
      const reads = await client.multiRead(
        paths.map((path) => ({ type: 'getData' as const, path })),
        options,
      );
      return reads.map((read, i) => {
        if (read instanceof ZooKeeperError || read.op === 'getData') return read;
        throw new ZooKeeperError('PROTOCOL_ERROR', 'a getData in a multiRead was answered as a getChildren', { path: paths[i], op: 'multiRead' });
      });
    } catch (error) {
      if (!(error instanceof ZooKeeperError) || error.code !== 'UNIMPLEMENTED') throw error;
      withoutMultiRead.add(client);
    }
    try {
      return await getEach(client, paths, options);
    } catch (error) {
      // Sent before the client saw the server close the connection that refused the multiRead:
      // once more on the next one (bounded by the caller's signal and the request timeout).
      if (!isTransient(error)) throw error;
      await client.waitForConnected({ signal: options.signal });
    }
  }
  return getEach(client, paths, options);
}

/** One getData per path, pipelined; a read's own refusal (NONODE, NOAUTH) is its result. */
async function getEach(client: ZooKeeperClient, paths: readonly string[], options: CallOptions): Promise<EachRead[]> {
  const reads = await Promise.allSettled(paths.map((path) => client.getData(path, options)));
  return reads.map((read) => {
    if (read.status === 'fulfilled') return read.value;
    const error: unknown = read.reason;
    if (error instanceof ZooKeeperError && (error.code === 'NONODE' || error.code === 'NOAUTH')) return error;
    throw error;
  });
}
