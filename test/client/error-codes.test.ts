import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { LockErrorCode, ZooKeeperErrorCode } from '../../src/index.js';
import { LockError, LockLostError, ZooKeeperError, isZooKeeperError } from '../../src/index.js';

/** Compiles only when `value` has type T: the checks below are made by `npm run typecheck`. */
function expectType<T>(value: T): T {
  return value;
}

describe('error codes', () => {
  it('name a server code by the table, an unknown one UNKNOWN with its number kept', () => {
    const known = ZooKeeperError.fromServer(-101, 'getData', '/a');
    assert.equal(known.code, 'NONODE');
    assert.equal(known.zkCode, -101);
    const unknown = ZooKeeperError.fromServer(-999, 'getData', '/a');
    assert.equal(unknown.code, 'UNKNOWN');
    assert.equal(unknown.zkCode, -999);
    assert.match(unknown.message, /-999/);
  });

  it('carry the server number of a server name raised locally, and none for a local code', () => {
    assert.equal(new ZooKeeperError('SESSIONEXPIRED', 'session expired').zkCode, -112);
    assert.equal(new LockError('LOCK_TIMEOUT', 'not acquired').zkCode, undefined);
    assert.equal(new ZooKeeperError('TIMEOUT', 'not connected').zkCode, undefined);
    assert.equal(new ZooKeeperError('CHROOT_MISSING', 'no chroot', { zkCode: -101 }).zkCode, -101);
  });

  it('narrow with isZooKeeperError, and reject a misspelt code at compile time', () => {
    const error: unknown = new LockError('LOCK_TIMEOUT', 'not acquired');
    assert.equal(isZooKeeperError(error), true);
    assert.equal(isZooKeeperError(error, 'LOCK_TIMEOUT'), true);
    assert.equal(isZooKeeperError(error, 'NONODE'), false);
    const narrowed = (e: unknown): void => {
      if (isZooKeeperError(e, 'NONODE')) expectType<'NONODE'>(e.code);
      if (isZooKeeperError(e)) expectType<ZooKeeperErrorCode>(e.code);
      if (e instanceof LockError) expectType<LockErrorCode>(e.code);
    };
    narrowed(error);

    // @ts-expect-error -- not a code
    isZooKeeperError(error, 'NONOD');
    // @ts-expect-error -- the server's name is NONODE
    void new ZooKeeperError('NO_NODE', 'missing');
    // @ts-expect-error -- one spelling in every layer: the recipes say SESSIONEXPIRED too
    void new LockError('SESSION_EXPIRED', 'expired');
    // @ts-expect-error -- and CLOSED, not CLIENT_CLOSED
    void new LockLostError('CLIENT_CLOSED', '/lock', 'closed');
    if (error instanceof ZooKeeperError) {
      // @ts-expect-error -- a comparison with a code that does not exist
      assert.ok(error.code !== 'CONECTIONLOSS');
    }
  });
});
