import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import * as protocol from '../../src/protocol/index.js';

const { ZooKeeperError } = protocol;

/** A stack with frames has lines "    at …" after its header. */
const FRAME = /\n\s+at /;

describe('errors for expected outcomes', () => {
  it('a server error is built without a stack, and is still a complete ZooKeeperError', () => {
    const error = ZooKeeperError.fromServer(-101, 'exists', '/a/b');
    assert.ok(error instanceof ZooKeeperError && error instanceof Error);
    assert.equal(error.code, 'NONODE');
    assert.equal(error.zkCode, -101);
    assert.equal(error.op, 'exists');
    assert.equal(error.path, '/a/b');
    assert.equal(error.message, 'NONODE: node does not exist (exists /a/b)');
    assert.equal(error.stack, `ZooKeeperError: ${error.message}`);
    assert.doesNotMatch(error.stack, FRAME);
  });

  it('leaves Error.stackTraceLimit as it was, for errors made afterwards', () => {
    const limit = Error.stackTraceLimit;
    protocol.withoutStack(() => new ZooKeeperError('TIMEOUT', 'late'));
    assert.throws(() => protocol.withoutStack(() => assert.fail('thrown while building')));
    assert.equal(Error.stackTraceLimit, limit);
    assert.match(new ZooKeeperError('TIMEOUT', 'late').stack ?? '', FRAME);
  });

  it('still builds the error where Error.stackTraceLimit cannot be set (frozen intrinsics)', () => {
    const own = Object.getOwnPropertyDescriptor(Error, 'stackTraceLimit')!;
    Object.defineProperty(Error, 'stackTraceLimit', { ...own, writable: false });
    try {
      const error = ZooKeeperError.fromServer(-110, 'create', '/x');
      assert.equal(error.code, 'NODEEXISTS');
    } finally {
      Object.defineProperty(Error, 'stackTraceLimit', own);
    }
  });
});
