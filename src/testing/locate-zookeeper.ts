import { existsSync, readdirSync, statSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { HarnessError } from './harness-error.js';
import { locateJava, MINIMUM_JAVA_VERSION } from './locate-java.js';
import type { JavaRuntime } from './locate-java.js';

/** Where to find ZooKeeper and Java. Everything is optional; see {@link locateZooKeeper} for the search order. */
export interface ZooKeeperLocatorOptions {
  /** Complete JVM class path for the ZooKeeper server (entries, or one `:`-separated string). Wins over everything else. */
  readonly classpath?: string | readonly string[];
  /** An Apache ZooKeeper binary tarball directory (with `lib/*.jar`). */
  readonly zookeeperHome?: string;
  /** A JDK/JRE directory (with `bin/java`). Default: `$JAVA_HOME`, else `java` on `PATH`. */
  readonly javaHome?: string;
}

/** Where the locator looks besides the options; tests substitute their own. */
export interface LocatorEnvironment {
  /** Default: `process.env`. Read: `ZOOKEEPER_CLASSPATH`, `ZOOKEEPER_HOME`, `JAVA_HOME`, `PATH`. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Debian/Ubuntu jar directory. Default `/usr/share/java`. */
  readonly systemJarDir?: string;
}

/** A ZooKeeper installation ready to be started. */
export interface ZooKeeperInstallation {
  readonly java: JavaRuntime;
  /** JVM class path entries, in order. */
  readonly classpath: readonly string[];
  /** Which rule found it, e.g. `ZOOKEEPER_HOME (/opt/zookeeper)` or `Debian/Ubuntu package (/usr/share/java)`. */
  readonly source: string;
}

const DEFAULT_SYSTEM_JAR_DIR = '/usr/share/java';

const INSTALL_HINT =
  'Install ZooKeeper: on Debian/Ubuntu `apt-get install zookeeper`; elsewhere download an Apache ZooKeeper ' +
  'binary tarball (apache-zookeeper-3.8.x-bin.tar.gz) and set ZOOKEEPER_HOME to its directory, or set ' +
  `ZOOKEEPER_CLASSPATH to a complete class path. Java ${MINIMUM_JAVA_VERSION}+ is required.`;

function notFound(source: string, problem: string, tried: readonly string[]): HarnessError {
  return new HarnessError('ZOOKEEPER_NOT_FOUND', `${problem}. ${INSTALL_HINT}`, { source, tried });
}

function classpathEntryExists(entry: string): boolean {
  // `dir/*` is the JVM's own wildcard syntax for "every jar in dir".
  return entry.endsWith('/*') ? existsSync(entry.slice(0, -2)) : existsSync(entry);
}

function fromExplicitClasspath(source: string, classpath: string | readonly string[]): string[] {
  const entries = (typeof classpath === 'string' ? classpath.split(delimiter) : [...classpath]).filter((e) => e !== '');
  const missing = entries.filter((entry) => !classpathEntryExists(entry));
  if (entries.length === 0 || missing.length > 0) {
    throw notFound(
      source,
      entries.length === 0 ? `${source} is empty` : `${source} names missing files: ${missing.join(', ')}`,
      entries,
    );
  }
  return entries;
}

function fromTarball(source: string, home: string): string[] {
  const lib = join(home, 'lib');
  const jars = existsSync(lib) ? readdirSync(lib).filter((name) => name.endsWith('.jar')) : [];
  if (!jars.some((name) => /^zookeeper-\d.*\.jar$/.test(name))) {
    throw notFound(source, `${source} (${home}) is not an Apache ZooKeeper tarball: no lib/zookeeper-<version>.jar`, [lib]);
  }
  // The tarball's conf/ holds its logback.xml; without it logback logs everything at DEBUG.
  const conf = join(home, 'conf');
  const confEntry = existsSync(conf) && statSync(conf).isDirectory() ? [conf] : [];
  return [...confEntry, ...jars.sort().map((name) => join(lib, name))];
}

/**
 * Debian's zookeeper.jar names its dependencies in its manifest Class-Path, but that list has no
 * slf4j binding (we add slf4j-simple so the server log is not silently discarded) and lacks
 * netty-codec, which Netty's SslHandler needs for the TLS port.
 */
function fromSystemJars(jarDir: string): string[] | undefined {
  const zookeeperJar = join(jarDir, 'zookeeper.jar');
  if (!existsSync(zookeeperJar)) return undefined;
  const extras = ['slf4j-simple.jar', 'netty-codec.jar'].map((name) => join(jarDir, name)).filter((path) => existsSync(path));
  return [zookeeperJar, ...extras];
}

function findClasspath(
  options: ZooKeeperLocatorOptions,
  env: Readonly<Record<string, string | undefined>>,
  systemJarDir: string,
): { classpath: string[]; source: string } {
  if (options.classpath !== undefined) {
    return { classpath: fromExplicitClasspath('the classpath option', options.classpath), source: 'classpath option' };
  }
  if (options.zookeeperHome !== undefined) {
    return {
      classpath: fromTarball('the zookeeperHome option', options.zookeeperHome),
      source: `zookeeperHome option (${options.zookeeperHome})`,
    };
  }
  const envClasspath = env.ZOOKEEPER_CLASSPATH;
  if (envClasspath !== undefined && envClasspath !== '') {
    return { classpath: fromExplicitClasspath('ZOOKEEPER_CLASSPATH', envClasspath), source: 'ZOOKEEPER_CLASSPATH' };
  }
  const envHome = env.ZOOKEEPER_HOME;
  if (envHome !== undefined && envHome !== '') {
    return { classpath: fromTarball('ZOOKEEPER_HOME', envHome), source: `ZOOKEEPER_HOME (${envHome})` };
  }
  const systemJars = fromSystemJars(systemJarDir);
  if (systemJars !== undefined) return { classpath: systemJars, source: `Debian/Ubuntu package (${systemJarDir})` };
  throw notFound('search', 'No ZooKeeper installation found', [
    'classpath option',
    'zookeeperHome option',
    'ZOOKEEPER_CLASSPATH',
    'ZOOKEEPER_HOME',
    join(systemJarDir, 'zookeeper.jar'),
  ]);
}

/**
 * Finds ZooKeeper and Java. ZooKeeper, first match wins: the `classpath` option, the
 * `zookeeperHome` option (Apache tarball layout), `$ZOOKEEPER_CLASSPATH`, `$ZOOKEEPER_HOME`
 * (tarball layout), the Debian/Ubuntu package (`/usr/share/java/zookeeper.jar`). An explicitly
 * named location that is broken is an error rather than being skipped. Throws
 * `ZOOKEEPER_NOT_FOUND`, `JAVA_NOT_FOUND` or `JAVA_TOO_OLD`, with what to install in the message.
 */
export async function locateZooKeeper(
  options: ZooKeeperLocatorOptions = {},
  environment: LocatorEnvironment = {},
): Promise<ZooKeeperInstallation> {
  const env = environment.env ?? process.env;
  const { classpath, source } = findClasspath(options, env, environment.systemJarDir ?? DEFAULT_SYSTEM_JAR_DIR);
  const java = await locateJava(options.javaHome, env);
  return { java, classpath, source };
}
