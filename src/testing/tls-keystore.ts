import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { HarnessError } from './harness-error.js';
import type { JavaRuntime } from './locate-java.js';
import { OWNER_MARKER } from './process-watchdog.js';

/** A throwaway server identity for the TLS client port. */
export interface TlsMaterial {
  /** PKCS#12 key store holding the private key and the self-signed certificate. */
  readonly keyStorePath: string;
  readonly keyStorePassword: string;
  /** The self-signed certificate (PEM); pass it as `ca` to `tls.connect`. */
  readonly certificatePem: string;
  /** The x509 client identities (`x509Clients`), by name, and the trust store holding their certificates. */
  readonly clients: ReadonlyMap<string, X509Client>;
  readonly trustStorePath: string | undefined;
}

/** A client identity of the `x509` scheme: a key and a self-signed certificate for CN=<name> that the server trusts. */
export interface X509Client {
  readonly name: string;
  /** The id ACL entries name it by (scheme `x509`): the certificate's subject, `CN=<name>`. */
  readonly id: string;
  /** Options for the client's `tls`: presents this identity, trusts the server's certificate. */
  readonly tls: { readonly pfx: Buffer; readonly passphrase: string; readonly ca: string };
}

const KEYTOOL_TIMEOUT_MS = 30_000;
const ALIAS = 'zklock-test-server';

function keytool(java: JavaRuntime, args: readonly string[]): Promise<void> {
  // keytool sits next to java in every JDK/JRE layout, including Debian's /usr/bin alternatives.
  const command = join(dirname(java.executable), 'keytool');
  // keytool is itself a JVM: mark it like the servers and spare it the C2 compiler.
  const jvmOptions = [OWNER_MARKER, '-XX:TieredStopAtLevel=1', '-XX:+UseSerialGC', '-XX:-UsePerfData'].map((o) => `-J${o}`);
  return new Promise((resolve, reject) => {
    execFile(command, [...args, ...jvmOptions], { timeout: KEYTOOL_TIMEOUT_MS }, (error, stdout, stderr) => {
      if (error === null) {
        resolve();
        return;
      }
      reject(
        new HarnessError(
          'KEYTOOL_FAILED',
          `${command} ${args[0] ?? ''} failed: ${error.message}\n${stderr}${stdout}`,
          { command: `${command} ${args.join(' ')}`, output: `${stderr}${stdout}` },
          { cause: error },
        ),
      );
    });
  });
}

/**
 * Generates, in `dir`, a key store with a fresh EC key and a self-signed certificate for
 * CN=127.0.0.1 with SANs IP:127.0.0.1 and DNS:localhost, and exports the certificate as PEM.
 */
export async function createTlsMaterial(dir: string, java: JavaRuntime, clientNames: readonly string[] = []): Promise<TlsMaterial> {
  await mkdir(dir, { recursive: true });
  const keyStorePath = join(dir, 'server-keystore.p12');
  // One password for every store of this throwaway material.
  const keyStorePassword = randomBytes(12).toString('hex');
  const certificatePath = await selfSigned(java, keyStorePath, keyStorePassword, ALIAS, 'CN=127.0.0.1', ['-ext', 'SAN=ip:127.0.0.1,dns:localhost']);
  const certificatePem = await readFile(certificatePath, 'utf8');
  const clients = new Map<string, X509Client>();
  const trustStorePath = clientNames.length === 0 ? undefined : join(dir, 'client-truststore.p12');
  for (const [i, name] of clientNames.entries()) {
    const store = join(dir, `client-${i}.p12`);
    const certificate = await selfSigned(java, store, keyStorePassword, `client-${i}`, `CN=${name}`, []);
    await keytool(java, ['-importcert', '-noprompt', '-alias', `client-${i}`, '-file', certificate, '-keystore', trustStorePath!, '-storetype', 'PKCS12', '-storepass', keyStorePassword]);
    clients.set(name, { name, id: `CN=${name}`, tls: { pfx: await readFile(store), passphrase: keyStorePassword, ca: certificatePem } });
  }
  return { keyStorePath, keyStorePassword, certificatePem, clients, trustStorePath };
}

/** A key store at `path` with a fresh EC key and a self-signed certificate for `dname`; returns the certificate's PEM file. */
async function selfSigned(java: JavaRuntime, path: string, password: string, alias: string, dname: string, extra: readonly string[]): Promise<string> {
  const store = ['-keystore', path, '-storetype', 'PKCS12', '-storepass', password];
  // EC keys generate in milliseconds; RSA 2048 would add noticeable time to every TLS start.
  await keytool(java, ['-genkeypair', '-alias', alias, '-keyalg', 'EC', '-groupname', 'secp256r1', '-validity', '30', '-dname', dname, ...extra, '-keypass', password, ...store]);
  const certificatePath = `${path.slice(0, -'.p12'.length)}-cert.pem`;
  await keytool(java, ['-exportcert', '-rfc', '-alias', alias, '-file', certificatePath, ...store]);
  return certificatePath;
}
