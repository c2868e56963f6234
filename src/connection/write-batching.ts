/** Below this many requests in flight, a request is written at once (the pipelines of locks and recipes are shallower). */
export const MIN_IN_FLIGHT_TO_BATCH = 8;

/**
 * Whether the requests waiting to be written may wait for more replies, to go out with the
 * requests made meanwhile in one larger write: `inFlight` written and unanswered, `waiting` not
 * yet written. A deep pipeline (many calls in flight, each made again as its reply comes) otherwise
 * makes one write per read of replies, which from a busy server is one or two replies: a system
 * call, and a wake-up of the server, per request or two; most of the client's CPU (and much of
 * the server's). Held until a quarter of the pipeline waits, each write carries that quarter.
 *
 * Why a held request loses no time: ZooKeeper answers a session's requests in the order it
 * received them (FIFO client order; reads wait behind the session's writes too), so a request
 * written behind n others that the server has not answered is answered only after all n. The
 * pump that holds it runs in the microtasks after a read of replies (each reply schedules one, and
 * the calls that replies resume come then too), and a read takes every byte the socket holds, up
 * to its buffer (64 KiB, hundreds of small replies): the requests still unanswered then are at the
 * server, but for the replies that came during the microseconds of handling the read. It is held
 * only while at least MIN_IN_FLIGHT_TO_BATCH of them are ahead of it, and every read looks again:
 * in a deep pipeline it goes while three quarters of it are still ahead, whose processing covers
 * its way to the server, so its answer comes when it would have and the server is never short of
 * requests. The cases that cost: a single read bringing back everything ahead of it (the client
 * was slower than the server to read), or a read that filled the buffer with more waiting behind
 * it; the request then goes out a read later than it could have, when the client's CPU, which
 * the writes saved here spare, is the bound anyway. A request made outside the handling of a read
 * (in a timer) waits at most for the next read, which the event loop makes at once when replies
 * are waiting.
 *
 * Why it is never held for ever: requests in flight only get answered, or fail with the
 * connection (the held ones with them, as not sent, which they were); the count falls below the
 * bound. What must go out before what follows it (close()'s, addAuth's, a new connection's) is
 * pumped without this hold.
 */
export function holdForBatch(inFlight: number, waiting: number): boolean {
  return inFlight >= MIN_IN_FLIGHT_TO_BATCH && waiting * 3 < inFlight;
}
