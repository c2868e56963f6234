import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import { ZooKeeperError } from '../../src/index.js';
import { DigestMd5Client, parseDirectives } from '../../src/connection/session/sasl.js';

const CHALLENGE = Buffer.from('realm="zk-sasl-md5",nonce="n0nce\\"x",qop="auth",charset=utf-8,algorithm=md5-sess');
const OPTIONS = { mechanism: 'DIGEST-MD5', username: 'bob', password: 'pw' } as const;

function md5(data: string | Buffer): Buffer {
  return createHash('md5').update(data).digest();
}

describe('DIGEST-MD5 client (RFC 2831)', () => {
  it('parses quoted, escaped and repeated directives', () => {
    const d = parseDirectives('realm="a",realm="b" , nonce="x\\"y,z",qop=auth,maxbuf=65536');
    assert.deepEqual(d.get('realm'), ['a', 'b']);
    assert.deepEqual(d.get('nonce'), ['x"y,z']);
    assert.deepEqual(d.get('qop'), ['auth']);
  });

  it('answers with the response digest of RFC 2831 2.1.2.1, and checks the server\'s rspauth', () => {
    const client = new DigestMd5Client(OPTIONS);
    assert.equal(client.start().length, 0);
    const answer = parseDirectives(client.step(CHALLENGE)!.toString('utf8'));
    const cnonce = answer.get('cnonce')![0]!;
    assert.equal(answer.get('digest-uri')![0], 'zookeeper/zk-sasl-md5');
    assert.equal(answer.get('realm')![0], 'zk-sasl-md5');
    assert.equal(answer.get('authzid')![0], 'bob');
    // Computed independently here, from the RFC's formulas.
    const a1 = Buffer.concat([md5('bob:zk-sasl-md5:pw'), Buffer.from(`:n0nce"x:${cnonce}:bob`)]);
    const kd = (a2: string): string => md5(`${md5(a1).toString('hex')}:n0nce"x:00000001:${cnonce}:auth:${md5(a2).toString('hex')}`).toString('hex');
    assert.equal(answer.get('response')![0], kd('AUTHENTICATE:zookeeper/zk-sasl-md5'));
    assert.equal(client.complete, false);
    assert.equal(client.step(Buffer.from(`rspauth=${kd(':zookeeper/zk-sasl-md5')}`)), undefined);
    assert.equal(client.complete, true);
  });

  it('a server that cannot prove it knows the password, or offers no qop auth, fails with AUTHFAILED', () => {
    const forged = new DigestMd5Client(OPTIONS);
    forged.start();
    forged.step(CHALLENGE);
    assert.throws(() => forged.step(Buffer.from('rspauth=0123456789abcdef0123456789abcdef')), (e) => e instanceof ZooKeeperError && e.code === 'AUTHFAILED');
    const integrityOnly = new DigestMd5Client(OPTIONS);
    integrityOnly.start();
    assert.throws(() => integrityOnly.step(Buffer.from('nonce="x",qop="auth-int",algorithm=md5-sess')), (e) => e instanceof ZooKeeperError && e.code === 'AUTHFAILED');
    // A server without a JAAS Server section answers SASL with an empty token.
    const unconfigured = new DigestMd5Client(OPTIONS);
    unconfigured.start();
    assert.throws(() => unconfigured.step(null), (e) => e instanceof ZooKeeperError && /no nonce/.test(e.message));
  });
});
