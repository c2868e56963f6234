import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { describe, it } from 'node:test';
import { HarnessError, isHarnessError } from '../../src/testing/index.js';
import { acceptsConnections, allocatePort, retryOnPortConflict } from '../../src/testing/loopback-ports.js';
import { ROUND_TRIPS_MS } from '../support/bounds.js';

describe('loopback ports', () => {
  it('allocates distinct ports that can be bound on 127.0.0.1', async () => {
    const ports = [await allocatePort(), await allocatePort(), await allocatePort()];
    assert.equal(new Set(ports).size, 3);
    const server = createServer();
    server.listen(ports[0], '127.0.0.1');
    await once(server, 'listening');
    assert.equal(await acceptsConnections(ports[0] ?? 0, ROUND_TRIPS_MS), true);
    server.close();
    await once(server, 'close');
    assert.equal(await acceptsConnections(ports[0] ?? 0, ROUND_TRIPS_MS), false);
  });

  it('retries a first start on fresh ports only for PORT_UNAVAILABLE, at most three times', async () => {
    const conflict = (): HarnessError => new HarnessError('PORT_UNAVAILABLE', 'taken', {});
    let attempts = 0;
    await retryOnPortConflict(() => {
      attempts++;
      return attempts < 3 ? Promise.reject(conflict()) : Promise.resolve();
    });
    assert.equal(attempts, 3);

    attempts = 0;
    await assert.rejects(
      retryOnPortConflict(() => {
        attempts++;
        return Promise.reject(conflict());
      }),
      (error) => isHarnessError(error, 'PORT_UNAVAILABLE'),
    );
    assert.equal(attempts, 3);

    attempts = 0;
    await assert.rejects(
      retryOnPortConflict(() => {
        attempts++;
        return Promise.reject(new HarnessError('START_TIMEOUT', 'slow', { label: 'x', timeoutMs: 1, logFile: '', logTail: '' }));
      }),
      (error) => isHarnessError(error, 'START_TIMEOUT'),
    );
    assert.equal(attempts, 1);
  });
});
