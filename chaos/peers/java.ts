/**
 * Compiling and running small Java programs against Apache Curator 5.4 as Debian packages it
 * (libcurator-recipes-java), for peers that contend beside zklock: the chaos run's Curator
 * worker, and any benchmark or test that wants Curator on the other side of a lock.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { access, constants, mkdir, mkdtemp, readdir, realpath, rename, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, delimiter, dirname, join, resolve } from 'node:path';
import { locateJava } from '../../src/testing/locate-java.js';

const SYSTEM_JARS = '/usr/share/java';
const INSTALL_HINT = 'bash scripts/install-system-deps.sh installs libcurator-recipes-java';
/** The class files target this release; older JDKs cannot compile for it. */
const JAVA_RELEASE = 17;
/** javac on one small file takes seconds; a starved 2-core machine may need many times that. */
const COMPILE_TIMEOUT_MS = 120_000;

/**
 * What a Curator client with the lock recipes needs, compile time and run time, as Debian names
 * them. Checked by running the chaos Curator worker on copies stripped of their manifests (the
 * packaged jars name their Depends in Class-Path, which would hide a missing entry):
 * - Debian's guava bundles failureaccess, which Maven ships as a jar of its own;
 * - no Netty: only ClientCnxnSocketNetty uses it, which zookeeper.clientCnxnSocket must ask for (TLS);
 * - no Jackson, though libcurator-framework-java depends on it: only Curator's SchemaSetLoader uses it;
 * - slf4j-nop (from libslf4j-java, beside slf4j-api) silences Curator's and ZooKeeper's logging,
 *   and slf4j's own warning that no binding is present.
 */
const CURATOR_JARS = [
  'curator-recipes.jar',
  'curator-framework.jar',
  'curator-client.jar',
  'zookeeper.jar',
  'zookeeper-jute.jar',
  'guava.jar',
  'slf4j-api.jar',
  'slf4j-nop.jar',
];

/** The jars to put on `-cp` for Curator's recipes; throws naming those that are missing. */
export function curatorClasspath(jarDir = SYSTEM_JARS): string[] {
  const jars = CURATOR_JARS.map((name) => join(jarDir, name));
  const missing = jars.filter((jar) => !existsSync(jar));
  if (missing.length > 0) throw new Error(`Curator 5.4 needs ${missing.join(', ')}, which ${missing.length === 1 ? 'is' : 'are'} missing (${INSTALL_HINT})`);
  return jars;
}

/** `java` as the harness finds it (JAVA_HOME, else PATH), and the `javac` of the same JDK. */
export async function javaTools(): Promise<{ java: string; javac: string }> {
  const runtime = await locateJava(undefined, process.env);
  if (runtime.majorVersion < JAVA_RELEASE) throw new Error(`${runtime.executable} is Java ${runtime.majorVersion}; the peers are compiled for Java ${JAVA_RELEASE}+ (set JAVA_HOME to a newer JDK)`);
  // Beside the resolved java: Debian's /usr/bin/java is an alternatives link into the JDK.
  const javac = join(dirname(await realpath(runtime.executable)), 'javac');
  try {
    await access(javac, constants.X_OK);
  } catch {
    throw new Error(`no javac beside ${runtime.executable} (looked for ${javac}): compiling needs a JDK (bash scripts/install-system-deps.sh installs default-jdk-headless)`);
  }
  return { java: runtime.executable, javac };
}

/**
 * For peers that run beside ZooKeeper JVMs on two cores: the serial collector and C1 alone start
 * fastest and take the least CPU, and a program this small needs little heap.
 */
export const LIGHT_JVM_OPTIONS: readonly string[] = ['-XX:+UseSerialGC', '-XX:TieredStopAtLevel=1', '-Xmx128m'];

/** How to run `source`'s program (its class named after the file) on Curator's class path, compiling it first when stale. */
export async function curatorProgram(source: string, jvmOptions: readonly string[]): Promise<{ file: string; args: string[] }> {
  const classpath = curatorClasspath();
  const classDir = classDirFor(source);
  await compileJava(source, classDir, classpath);
  const { java } = await javaTools();
  return { file: java, args: [...jvmOptions, '-cp', [classDir, ...classpath].join(delimiter), basename(source, '.java')] };
}

/** A class directory of its own for `source`, outside the work tree and kept across runs: the compile cache. */
export function classDirFor(source: string): string {
  const key = createHash('sha256').update(resolve(source)).digest('hex').slice(0, 16);
  return join(tmpdir(), 'zklock-java', `${basename(source, '.java')}-${key}`);
}

const compiling = new Map<string, Promise<void>>();

/**
 * Compiles `source`, a single-file program in the unnamed package, into `outDir` with javac
 * `--release 17` against `classpath`; does nothing when its class file is newer than the source and the jars.
 * Concurrent calls for the same files share one javac.
 */
export function compileJava(source: string, outDir: string, classpath: readonly string[], timeoutMs = COMPILE_TIMEOUT_MS): Promise<void> {
  const key = `${resolve(source)}\0${resolve(outDir)}`;
  let pending = compiling.get(key);
  if (!pending) {
    pending = compile(resolve(source), resolve(outDir), classpath, timeoutMs).finally(() => compiling.delete(key));
    compiling.set(key, pending);
  }
  return pending;
}

async function compile(source: string, outDir: string, classpath: readonly string[], timeoutMs: number): Promise<void> {
  const mainClass = `${basename(source, '.java')}.class`;
  // Stale when the source or any jar it was compiled against changed (a Curator upgrade).
  if (await newer(join(outDir, mainClass), [source, ...classpath])) return;
  const { javac } = await javaTools();
  await mkdir(outDir, { recursive: true });
  // javac writes into a directory of its own, so another process (a test file running beside
  // this one) never runs half-written classes from outDir.
  const staging = await mkdtemp(join(outDir, '.javac-'));
  try {
    await run(javac, ['--release', String(JAVA_RELEASE), '-encoding', 'UTF-8', '-d', staging, '-cp', classpath.join(delimiter), source], timeoutMs);
    const classes = await readdir(staging);
    if (!classes.includes(mainClass)) throw new Error(`javac wrote no ${mainClass} for ${source}: compileJava takes a program in the unnamed package, named after its file`);
    // The main class last: whoever sees it new (the cache check above) sees its nested classes too.
    for (const name of classes.filter((c) => c !== mainClass)) await place(join(staging, name), join(outDir, name));
    await place(join(staging, mainClass), join(outDir, mainClass));
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}

/**
 * Moves a compiled entry into place. A package directory (Curator's peer has `edu/…`) that a test
 * file compiling beside this one put there first cannot be renamed over (ENOTEMPTY): its classes
 * came from the same source and jars, so theirs stand and ours go with the staging directory.
 */
async function place(from: string, to: string): Promise<void> {
  try {
    await rename(from, to);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'ENOTEMPTY' && code !== 'EEXIST') throw error;
  }
}

async function newer(target: string, than: readonly string[]): Promise<boolean> {
  try {
    const built = (await stat(target)).mtimeMs;
    for (const input of than) if ((await stat(input)).mtimeMs >= built) return false;
    return true;
  } catch {
    return false;
  }
}

function run(javac: string, args: string[], timeoutMs: number): Promise<void> {
  return new Promise((resolvePromise, reject) => {
    execFile(javac, args, { timeout: timeoutMs, killSignal: 'SIGKILL', maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      if (!error) return resolvePromise();
      const why = error.killed ? `did not finish within ${timeoutMs} ms` : `failed (exit ${String(error.code ?? error.signal)})`;
      reject(new Error(`${javac} ${why} compiling ${args.at(-1)}:\n${`${stdout}${stderr}`.trim()}`, { cause: error }));
    });
  });
}
