import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { SessionEvent } from '../../src/index.js';
import { MAX_BUFFERED_STATE_CHANGES, StateChanges } from '../../src/client/state/state-changes.js';
import type { StateListener } from '../../src/client/state/state-listeners.js';
import { StateListeners } from '../../src/client/state/state-listeners.js';

/** A StateChanges on a fan-out these tests drive by hand, as the client's session would. */
function changesOf(signal?: AbortSignal): { listeners: StateListeners; changes: StateChanges } {
  const listeners = new StateListeners();
  return { listeners, changes: new StateChanges((listener: StateListener) => listeners.add(listener), signal) };
}

async function drain(changes: AsyncIterable<{ event: SessionEvent }>): Promise<SessionEvent[]> {
  const events: SessionEvent[] = [];
  for await (const { event } of changes) events.push(event);
  return events;
}

describe('the state subscription', () => {
  it('hands every change to a consumer that waits, and ends after closed', async () => {
    const { listeners, changes } = changesOf();
    const drained = drain(changes);
    listeners.dispatch('suspended');
    listeners.dispatch('reconnected');
    listeners.dispatch('closed');
    listeners.dispatch('connected');
    assert.deepEqual(await drained, ['suspended', 'reconnected', 'closed']);
  });

  it('keeps the newest changes for a consumer that falls behind, closed among them', async () => {
    const { listeners, changes } = changesOf();
    for (let i = 0; i < MAX_BUFFERED_STATE_CHANGES + 10; i++) listeners.dispatch(i % 2 ? 'reconnected' : 'suspended');
    listeners.dispatch('closed');
    const events = await drain(changes);
    assert.equal(events.length, MAX_BUFFERED_STATE_CHANGES);
    assert.equal(events.at(-1), 'closed');
  });

  it('ends at once when its signal aborts, forgetting what was not taken', async () => {
    const controller = new AbortController();
    const { listeners, changes } = changesOf(controller.signal);
    listeners.dispatch('suspended');
    assert.deepEqual(await changes.next(), { value: { event: 'suspended', reason: undefined }, done: false });
    const waiting = changes.next();
    controller.abort();
    assert.deepEqual(await waiting, { value: undefined, done: true });
    listeners.dispatch('reconnected');
    assert.deepEqual(await changes.next(), { value: undefined, done: true });
  });

  it('ends when the consumer leaves the loop', async () => {
    const { listeners, changes } = changesOf();
    listeners.dispatch('suspended');
    listeners.dispatch('reconnected');
    for await (const change of changes) {
      assert.equal(change.event, 'suspended');
      break;
    }
    assert.deepEqual(await changes.next(), { value: undefined, done: true });
  });

  it('ends at once when no change can come (a closed client, an aborted signal)', async () => {
    assert.deepEqual(await drain(new StateChanges(undefined, undefined)), []);
    assert.deepEqual(await drain(changesOf(AbortSignal.abort()).changes), []);
  });
});

describe('state listeners', () => {
  // A throwing listener is tested in a process of its own: listener-errors.test.ts.
  it('each hear every change until unsubscribed; the same function added twice is two subscriptions', () => {
    const listeners = new StateListeners();
    const heard: string[] = [];
    const off = listeners.add((event) => heard.push(`a:${event}`));
    const twice = (event: SessionEvent): void => void heard.push(`b:${event}`);
    const offOne = listeners.add(twice);
    listeners.add(twice);
    listeners.dispatch('suspended');
    off();
    offOne();
    offOne();
    listeners.dispatch('reconnected');
    assert.deepEqual(heard, ['a:suspended', 'b:suspended', 'b:suspended', 'b:reconnected']);
  });

  it('a listener removed by an earlier one during a change does not hear it', () => {
    const listeners = new StateListeners();
    const heard: string[] = [];
    let offSecond = (): void => undefined;
    listeners.add(() => offSecond());
    offSecond = listeners.add((event) => heard.push(event));
    listeners.dispatch('suspended');
    assert.deepEqual(heard, []);
  });
});
