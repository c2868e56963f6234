/**
 * How long a frame may be, each way. The server drops a connection whose request frame is longer
 * than its jute.maxbuffer (NIOServerCnxn.readLength, default 0xfffff), but it sends replies of any
 * length: a getChildren of a large node, a multiRead, or a getData of a node written to the limit.
 */

/** The server's default jute.maxbuffer: the longest request frame body it reads. */
export const DEFAULT_MAX_REQUEST_BYTES = 0xfffff;

/**
 * The longest reply frame body we read by default. The largest node data a default server stores
 * is just under jute.maxbuffer (the setData request carrying it is bounded by it); the reply that
 * returns it adds the reply header, a Stat and, in a multiRead, op headers (88 to 106 bytes).
 * 1024 covers them: it is also the smallest padding the server itself keeps over jute.maxbuffer
 * when it decodes records (BinaryInputArchive's zookeeper.jute.maxbuffer.extrasize floor). The
 * Java client reads at most 0xfffff, so it cannot read back a node written to the limit; we can.
 */
export const DEFAULT_MAX_REPLY_BYTES = DEFAULT_MAX_REQUEST_BYTES + 1024;

/** The smallest limit either way: below it the handshake's reply or an ordinary request would not fit, and nothing would work. */
export const MIN_FRAME_LIMIT = 1024;

/**
 * Lengths above this are not replies too large to read but garbage, and end the connection. It
 * is far beyond any jute.maxbuffer a server runs with (the server builds every reply as one
 * byte array), and it refuses every length whose first byte is 0x10 or more: ASCII text, or a
 * TLS record (0x15/0x16 0x03 …) from a secure port reached without TLS.
 */
export const FRAME_LENGTH_CEILING = 256 * 1024 * 1024;
