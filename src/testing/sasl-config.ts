import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { HarnessError } from './harness-error.js';

/**
 * SASL (DIGEST-MD5) for client connections: a JAAS `Server` section with ZooKeeper's
 * `DigestLoginModule`, and the `sasl` ACL scheme's provider.
 */
export interface SaslServerOptions {
  /** User name → password; each becomes `user_<name>="<password>"` in the JAAS file. */
  readonly users: Readonly<Record<string, string>>;
  /**
   * `-Dzookeeper.sessionRequireClientSASLAuth=true`: a connection that has not authenticated with
   * SASL gets SESSIONCLOSEDREQUIRESASLAUTH for its first request (a ping included) and is closed.
   * Default false.
   */
  readonly requireClientAuth?: boolean;
}

const JAAS_FILE = 'jaas.conf';

/** JAAS option names are tokens: a user name outside this set would break the file or its parsing. */
const USER_NAME = /^[A-Za-z0-9._-]+$/;

/** Writes the JAAS file into `dir` and returns the JVM arguments that use it. */
export async function saslJvmArguments(sasl: SaslServerOptions, dir: string): Promise<string[]> {
  const users = Object.entries(sasl.users ?? {});
  if (users.length === 0) throw new HarnessError('INVALID_OPTIONS', 'sasl.users must name at least one user', { option: 'sasl.users', value: sasl.users });
  for (const [name, password] of users) {
    if (!USER_NAME.test(name) || typeof password !== 'string') {
      throw new HarnessError('INVALID_OPTIONS', `sasl.users: user name must match ${USER_NAME} and its password be a string`, { option: `sasl.users.${name}`, value: password });
    }
  }
  const quote = (s: string): string => `"${s.replace(/["\\]/g, '\\$&')}"`;
  const file = join(dir, JAAS_FILE);
  const lines = users.map(([name, password]) => `  user_${name}=${quote(password)}`);
  await writeFile(file, `Server {\n  org.apache.zookeeper.server.auth.DigestLoginModule required\n${lines.join('\n')};\n};\n`);
  return [
    `-Djava.security.auth.login.config=${file}`,
    // Registers the `sasl` scheme, so that ACLs naming it are accepted and matched.
    '-Dzookeeper.authProvider.sasl=org.apache.zookeeper.server.auth.SASLAuthenticationProvider',
    ...(sasl.requireClientAuth === true ? ['-Dzookeeper.sessionRequireClientSASLAuth=true'] : []),
  ];
}
