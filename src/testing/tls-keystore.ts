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
export async function createTlsMaterial(dir: string, java: JavaRuntime): Promise<TlsMaterial> {
  await mkdir(dir, { recursive: true });
  const keyStorePath = join(dir, 'server-keystore.p12');
  const certificatePath = join(dir, 'server-cert.pem');
  const keyStorePassword = randomBytes(12).toString('hex');
  const store = ['-keystore', keyStorePath, '-storetype', 'PKCS12', '-storepass', keyStorePassword];
  // EC keys generate in milliseconds; RSA 2048 would add noticeable time to every TLS start.
  await keytool(java, [
    '-genkeypair',
    '-alias',
    ALIAS,
    '-keyalg',
    'EC',
    '-groupname',
    'secp256r1',
    '-validity',
    '30',
    '-dname',
    'CN=127.0.0.1',
    '-ext',
    'SAN=ip:127.0.0.1,dns:localhost',
    '-keypass',
    keyStorePassword,
    ...store,
  ]);
  await keytool(java, ['-exportcert', '-rfc', '-alias', ALIAS, '-file', certificatePath, ...store]);
  return { keyStorePath, keyStorePassword, certificatePem: await readFile(certificatePath, 'utf8') };
}
