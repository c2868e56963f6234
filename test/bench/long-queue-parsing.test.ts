import assert from 'node:assert/strict';
import { it } from 'node:test';
import { queueSizes } from '../../bench/config.js';
import { failureOutput } from '../../bench/run-process.js';

it('takes --long-queue sizes that are whole multiples of the sessions, and nothing else', () => {
  assert.deepEqual(queueSizes('100,1000,10_000', 100), [100, 1000, 10_000]);
  assert.deepEqual(queueSizes('10', 10), [10]);
  for (const bad of ['150', '0', '-100', '100,', '', 'abc', '1e2.5', '100,,200']) assert.equal(queueSizes(bad, 100), undefined, bad);
});

it("names why a process died though its stderr ends in a stack trace (V8's heap limit, a JVM's exception)", () => {
  const v8 = ['<--- JS stacktrace --->', '', 'FATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory', ' 1: 0xb8ed40 node::Abort() [node]', ' 2: 0xa9a1b1 [node]', ' 3: 0xd6e0d0 [node]', ' 4: 0xd6e477 [node]'].join('\n');
  assert.equal(failureOutput(v8), 'FATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory |  2: 0xa9a1b1 [node] |  3: 0xd6e0d0 [node] |  4: 0xd6e477 [node]');
  const java = ['Exception in thread "main" java.lang.IllegalStateException: not acquired within 60 s', '\tat CuratorBench.acquire(CuratorBench.java:96)', '\tat CuratorBench.drain(CuratorBench.java:240)', '\tat CuratorBench.herd(CuratorBench.java:226)', '\tat CuratorBench.main(CuratorBench.java:59)'].join('\n');
  assert.match(failureOutput(java), /^Exception in thread "main" java.lang.IllegalStateException: not acquired within 60 s \| /);
  assert.equal(failureOutput('RuntimeError: boom\n'), 'RuntimeError: boom', 'a short stderr as it is');
});
