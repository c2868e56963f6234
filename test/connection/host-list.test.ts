import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { literalAddresses, resolveAddresses } from '../../src/connection/hosts/addresses.js';
import type { HostPort } from '../../src/connection/hosts/connect-string.js';
import { HostList } from '../../src/connection/hosts/host-list.js';

const hosts = (...ports: number[]): HostPort[] => ports.map((port) => ({ host: '127.0.0.1', port }));
const TRIALS = 4000;

/** Connects a fresh list of `from` to `at`, updates it to `to`, and returns where the next connection goes (or undefined: stays). */
function afterUpdate(from: number[], at: number, to: number[]): number | undefined {
  const list = new HostList(hosts(...from));
  const current = hosts(at)[0]!;
  return list.update(hosts(...to), current, new Map()) ? list.next().port : undefined;
}

function tally(from: number[], at: number, to: number[]): Map<number | undefined, number> {
  const counts = new Map<number | undefined, number>();
  for (let i = 0; i < TRIALS; i++) {
    const where = afterUpdate(from, at, to);
    counts.set(where, (counts.get(where) ?? 0) + 1);
  }
  return counts;
}

describe("HostList.update: Java's StaticHostProvider.updateServerList rule", () => {
  it('a list grown from 3 to 5: a client whose server stays moves with probability 1 - 3/5, always to a new server', () => {
    const counts = tally([1, 2, 3], 1, [1, 2, 3, 4, 5]);
    const moved = TRIALS - (counts.get(undefined) ?? 0);
    // 0.4 × 4000 = 1600, standard deviation 31.
    assert.ok(Math.abs(moved - 0.4 * TRIALS) < 160, `${moved} moved`);
    assert.deepEqual([...counts.keys()].filter((k) => k !== undefined).sort(), [4, 5]);
  });

  it('a list shrunk from 5 to 3 (4 and 5 removed): a client of 4 moves to a remaining server, spread evenly', () => {
    const counts = tally([1, 2, 3, 4, 5], 4, [1, 2, 3]);
    assert.equal(counts.get(undefined), undefined, 'always moves');
    for (const port of [1, 2, 3]) assert.ok(Math.abs((counts.get(port) ?? 0) - TRIALS / 3) < 200, JSON.stringify([...counts]));
  });

  it('a server replaced (1,2,3 to 1,2,4), client of 3: pNew 1 when the size stays (pOld = 0)', () => {
    const counts = tally([1, 2, 3], 3, [1, 2, 4]);
    assert.deepEqual([...counts.keys()], [4]);
  });

  it('a client whose server is in a list of the same or smaller size stays', () => {
    assert.equal(afterUpdate([1, 2, 3], 2, [3, 2, 1]), undefined);
    assert.equal(afterUpdate([1, 2, 3], 2, [2]), undefined);
  });
});

describe('HostList compares servers by address', () => {
  it('the server the client is on, listed again under another name or spelling of its address, stays and counts as listed; a name without addresses is compared as text', async () => {
    const byName = { host: 'localhost', port: 2181 };
    const listed = [{ host: '127.0.0.1', port: 2181 }];
    const book = await resolveAddresses([byName, ...listed], 5000);
    for (let i = 0; i < 200; i++) {
      const list = new HostList([byName]);
      assert.equal(list.update(listed, byName, book), false);
      assert.ok(list.has(byName));
    }
    const v6 = new HostList([{ host: '::1', port: 2181 }]);
    const spelled = [{ host: '0:0:0:0:0:0:0:1', port: 2181 }];
    assert.equal(v6.update(spelled, { host: '::1', port: 2181 }, literalAddresses([{ host: '::1', port: 2181 }, ...spelled])!), false);
    // Another port is another server; an unresolvable name is only itself.
    const other = new HostList([byName]);
    assert.equal(other.update([{ host: '127.0.0.1', port: 2182 }], byName, book), true);
    const unknown = await resolveAddresses([{ host: 'no-such-host.invalid', port: 2181 }], 2000);
    assert.deepEqual(unknown.get('no-such-host.invalid'), []);
  });
});
