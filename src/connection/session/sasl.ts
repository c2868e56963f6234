import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { ZooKeeperError } from '../../protocol/index.js';

/**
 * SASL credentials, sent on every connection before anything else (as the Java client does).
 * Only DIGEST-MD5, the mechanism of a JAAS `Server` section with `DigestLoginModule`
 * (`user_<name>="<password>"`); Kerberos (GSSAPI) is not supported: see the README.
 */
export interface SaslOptions {
  mechanism: 'DIGEST-MD5';
  username: string;
  password: string;
}

/**
 * The names ZooKeeper's server gives its DIGEST-MD5 mechanism (ZooKeeperSaslServer:
 * `Sasl.createSaslServer("DIGEST-MD5", "zookeeper", "zk-sasl-md5", …)`): the digest-uri must be
 * `zookeeper/zk-sasl-md5`, and the realm the server offers is `zk-sasl-md5`.
 */
const DIGEST_URI = 'zookeeper/zk-sasl-md5';

/** INVALID_ARGUMENT unless `sasl` is a usable SaslOptions. */
export function checkSaslOptions(sasl: SaslOptions): SaslOptions {
  const bad = (why: string): ZooKeeperError => new ZooKeeperError('INVALID_ARGUMENT', `sasl: ${why}`, { op: 'connect' });
  if (typeof sasl !== 'object' || sasl === null) throw bad('expected { mechanism: "DIGEST-MD5", username, password }');
  if (sasl.mechanism !== 'DIGEST-MD5') throw bad(`mechanism ${String(sasl.mechanism)} is not supported (only DIGEST-MD5)`);
  if (typeof sasl.username !== 'string' || sasl.username === '') throw bad('username must be a non-empty string');
  if (typeof sasl.password !== 'string') throw bad('password must be a string');
  return { mechanism: sasl.mechanism, username: sasl.username, password: sasl.password };
}

/**
 * The client side of DIGEST-MD5 (RFC 2831) as ZooKeeper runs it, qop `auth` only (no integrity or
 * confidentiality layer: ZooKeeper never negotiates one). One instance per connection:
 * `start()` is the empty first token (the mechanism has no initial response), `step()` answers the
 * server's challenge, then checks its `rspauth` (mutual authentication: a server that does not
 * know the password cannot forge it) and returns undefined once done. Its failures are AUTHFAILED.
 */
export class DigestMd5Client {
  private stage: 'start' | 'challenge' | 'rspauth' | 'done' = 'start';
  private expectedRspauth = '';

  constructor(private readonly options: SaslOptions) {}

  get complete(): boolean {
    return this.stage === 'done';
  }

  start(): Buffer {
    this.stage = 'challenge';
    return Buffer.alloc(0);
  }

  /** The answer to the server's token, or undefined when the exchange is complete. */
  step(token: Buffer | null): Buffer | undefined {
    const directives = parseDirectives(token?.toString('utf8') ?? '');
    if (this.stage === 'challenge') return this.answer(directives);
    if (this.stage === 'rspauth') {
      const rspauth = directives.get('rspauth')?.[0] ?? '';
      const expected = Buffer.from(this.expectedRspauth);
      if (rspauth.length !== expected.length || !timingSafeEqual(Buffer.from(rspauth), expected)) {
        throw refused('the server did not prove it knows the password (rspauth missing or wrong)');
      }
      this.stage = 'done';
      return undefined;
    }
    throw refused(`unexpected server token after the exchange was ${this.stage === 'done' ? 'complete' : 'started'}`);
  }

  private answer(challenge: Map<string, string[]>): Buffer {
    const nonce = challenge.get('nonce')?.[0];
    if (!nonce) throw refused('the challenge has no nonce (a server without a JAAS Server section answers with an empty one)');
    const qops = (challenge.get('qop')?.[0] ?? 'auth').split(',').map((q) => q.trim());
    if (!qops.includes('auth')) throw refused(`the server offers qop ${qops.join(',')}, not auth`);
    if (challenge.get('algorithm')?.[0] !== 'md5-sess') throw refused('the challenge does not name algorithm=md5-sess');
    const utf8 = challenge.get('charset')?.[0]?.toLowerCase() === 'utf-8';
    const realm = challenge.get('realm')?.[0];
    const cnonce = randomBytes(24).toString('base64');
    const nc = '00000001';
    const { username, password } = this.options;
    // The Java client passes the user name as the authorization id too: the server then grants
    // the identity `sasl:<username>`.
    const authzid = username;
    const text = (s: string): Buffer => encodeText(s, utf8);
    const a1 = Buffer.concat([
      md5(Buffer.concat([text(username), Buffer.from(':'), text(realm ?? ''), Buffer.from(':'), text(password)])),
      Buffer.from(`:${nonce}:${cnonce}:`),
      text(authzid),
    ]);
    const ha1 = md5(a1).toString('hex');
    const kd = (a2: string): string => md5(Buffer.from(`${ha1}:${nonce}:${nc}:${cnonce}:auth:${md5(Buffer.from(a2)).toString('hex')}`)).toString('hex');
    this.expectedRspauth = kd(`:${DIGEST_URI}`);
    this.stage = 'rspauth';
    const fields = [
      ...(utf8 ? ['charset=utf-8'] : []),
      `username=${quote(username)}`,
      ...(realm === undefined ? [] : [`realm=${quote(realm)}`]),
      `nonce=${quote(nonce)}`,
      `nc=${nc}`,
      `cnonce=${quote(cnonce)}`,
      `digest-uri=${quote(DIGEST_URI)}`,
      'maxbuf=65536',
      `response=${kd(`AUTHENTICATE:${DIGEST_URI}`)}`,
      'qop=auth',
      `authzid=${quote(authzid)}`,
    ];
    return Buffer.from(fields.join(','), utf8 ? 'utf8' : 'latin1');
  }
}

function refused(why: string): ZooKeeperError {
  return new ZooKeeperError('AUTHFAILED', `SASL DIGEST-MD5: ${why}`, { zkCode: -115, op: 'sasl' });
}

function md5(data: Buffer): Buffer {
  return createHash('md5').update(data).digest();
}

/**
 * RFC 2831 2.1.2.1: with charset=utf-8, a string whose characters all fit ISO 8859-1 is hashed in
 * ISO 8859-1 all the same (as Java's DIGEST-MD5 server does); any other in UTF-8.
 */
function encodeText(s: string, utf8: boolean): Buffer {
  return utf8 && [...s].some((c) => c.codePointAt(0)! > 0xff) ? Buffer.from(s, 'utf8') : Buffer.from(s, 'latin1');
}

function quote(s: string): string {
  return `"${s.replace(/["\\]/g, '\\$&')}"`;
}

/** `key=value` or `key="quoted \"value\""` pairs separated by commas; a key may repeat (realm). */
export function parseDirectives(text: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  const pattern = /\s*([A-Za-z0-9-]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^,]*))\s*(?:,|$)/y;
  for (let match = pattern.exec(text); match && match[0] !== ''; match = pattern.exec(text)) {
    const value = match[2] !== undefined ? match[2].replace(/\\(.)/g, '$1') : match[3]!.trim();
    const key = match[1]!.toLowerCase();
    out.set(key, [...(out.get(key) ?? []), value]);
  }
  return out;
}
