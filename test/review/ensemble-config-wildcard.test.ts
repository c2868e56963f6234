import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseEnsembleConfig } from '../../src/index.js';

describe('review: parseEnsembleConfig and the IPv6 wildcard as ZooKeeper writes it', () => {
  it('a member whose client address is the IPv6 wildcard is reached at its quorum host (ZooKeeper prints :: as [0:0:0:0:0:0:0:0], Inet6Address.getHostAddress)', () => {
    const config = parseEnsembleConfig(
      ['server.1=10.0.0.1:2888:3888:participant;[0:0:0:0:0:0:0:0]:2181', 'server.2=10.0.0.2:2888:3888:participant;0.0.0.0:2181', 'version=100000000'].join('\n'),
    );
    assert.equal(config.connectString, '10.0.0.1:2181,10.0.0.2:2181');
  });
});
