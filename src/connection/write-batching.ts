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
 * written behind n unanswered ones is answered only after all n. It is held only while at least
 * MIN_IN_FLIGHT_TO_BATCH requests are still ahead of it, and every read of replies looks again
 * (each reply schedules a pump): in a deep pipeline it goes while three quarters of it are still
 * ahead, whose processing covers its way to the server, so its answer comes when it would have,
 * and the server is never short of requests. The one case that costs: a single read bringing back
 * everything ahead of it (the client was slower than the server to read): it then goes a one-way
 * trip later than it could have.
 *
 * Why it is never held for ever: requests in flight only get answered, or fail with the
 * connection (the held ones with them, as not sent, which they were); the count falls below the
 * bound. What must go out before what follows it (close()'s, addAuth's, a new connection's) is
 * pumped without this hold.
 */
export function holdForBatch(inFlight: number, waiting: number): boolean {
  return inFlight >= MIN_IN_FLIGHT_TO_BATCH && waiting * 3 < inFlight;
}
