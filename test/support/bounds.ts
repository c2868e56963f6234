import { DEFAULT_START_TIMEOUT_MS, DEFAULT_STOP_TIMEOUT_MS } from '../../src/testing/index.js';

/*
 * How long a test may wait for something, derived from what bounds it. The suite runs beside
 * real ZooKeeper JVMs on machines whose cores may all be busy (CI neighbours; `npm run
 * test:stress` adds a CPU burner per core), where timers fire late, JVMs are descheduled and a
 * round trip can take a second. A bound is reached only when a test fails, so each one leaves
 * room that a loaded machine never uses up; none of them claims how fast anything is (that is
 * the benchmarks' job).
 */

/** What a starved machine may add to anything: late timers, descheduled JVMs, GC pauses. */
export const LOAD_SLACK_MS = 10_000;

/**
 * A few round trips on a working connection: a reply, a watch notification, a lock handed to
 * the next waiter, a reconnect to a server that is up.
 */
export const ROUND_TRIPS_MS = 20_000;

/**
 * Everything a session timeout `sessionTimeoutMs` bounds, with room: the client drops a silent
 * connection after 2/3 of it and concludes expiry one timeout later (5/3 in all); the server
 * expires the session about one timeout after it last heard from it (rounded up to a tick) and
 * deletes its ephemeral nodes; a reconnect takes at most a connect timeout (a third of it) per
 * attempt plus a back-off of up to 1 s.
 */
export function sessionBound(sessionTimeoutMs: number): number {
  return 3 * sessionTimeoutMs + LOAD_SLACK_MS;
}

/** A lock timeout that only a broken lock reaches: the test's own waits, each bounded by ROUND_TRIPS_MS, fail first. */
export const WAITER_TIMEOUT_MS = 3 * ROUND_TRIPS_MS;

/**
 * A test step that starts (or restarts) `starts` servers or ensembles and stops some: each start
 * is bounded by the harness's own start timeout, each stop by its stop timeout.
 */
export function harnessBound(starts: number, stops = 0): number {
  return starts * DEFAULT_START_TIMEOUT_MS + stops * DEFAULT_STOP_TIMEOUT_MS + ROUND_TRIPS_MS;
}
