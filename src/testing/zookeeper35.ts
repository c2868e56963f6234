import type { RequestDecider } from './proxy-connection.js';

/** ZooKeeper's UNIMPLEMENTED error code. */
const UNIMPLEMENTED = -6;

/**
 * The operations ZooKeeper 3.5 does not know, all added in 3.6 or later (checked against
 * Request.isValid of release-3.5.10 and ZooDefs.OpCode of release-3.6.0 and 3.7.0): multiRead 22,
 * getEphemerals 103, getAllChildrenNumber 104, setWatches2 105, addWatch 106 (3.6), whoAmI 107 (3.7).
 */
export const OPCODES_SINCE_ZOOKEEPER_36: ReadonlySet<number> = new Set([22, 103, 104, 105, 106, 107]);

/**
 * A decider that makes the server behind the proxy play ZooKeeper 3.5: an operation 3.5 does not
 * know ({@link OPCODES_SINCE_ZOOKEEPER_36}) is answered UNIMPLEMENTED and the connection closed,
 * as 3.5's UnimplementedRequestProcessor does (the session lives on); every other request is
 * put to `then` (default: forwarded).
 */
export function asZooKeeper35(then: RequestDecider = () => 'forward'): RequestDecider {
  return (request) => (OPCODES_SINCE_ZOOKEEPER_36.has(request.opcode) ? { error: UNIMPLEMENTED, close: true } : then(request));
}
