import { execFile } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';
import { HarnessError } from './harness-error.js';

/** ZooKeeper 3.8 needs Java 11 or newer. */
export const MINIMUM_JAVA_VERSION = 11;

const VERSION_CHECK_TIMEOUT_MS = 15_000;

/** A Java runtime the harness can start ZooKeeper with. */
export interface JavaRuntime {
  /** Absolute path of the `java` executable. */
  readonly executable: string;
  /** Feature release, e.g. 17. */
  readonly majorVersion: number;
}

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function findJavaExecutable(javaHome: string | undefined, env: Readonly<Record<string, string | undefined>>): string {
  const home = javaHome ?? env.JAVA_HOME;
  const candidates =
    home !== undefined && home !== ''
      ? [join(home, 'bin', 'java')]
      : (env.PATH ?? '')
          .split(delimiter)
          .filter((dir) => dir !== '')
          .map((dir) => join(dir, 'java'));
  const found = candidates.find(isExecutable);
  if (found === undefined) {
    throw new HarnessError(
      'JAVA_NOT_FOUND',
      `No Java runtime found (tried ${candidates.join(', ') || 'an empty PATH'}). ` +
        `Install Java ${MINIMUM_JAVA_VERSION}+ (Debian/Ubuntu: apt-get install default-jre-headless) or set JAVA_HOME.`,
      { tried: candidates },
    );
  }
  return found;
}

/** Parses the first line of `java -version`: `openjdk version "17.0.15"` or `java version "1.8.0_352"`. */
export function parseJavaMajorVersion(versionOutput: string): number | undefined {
  const match = /version "(\d+)(?:\.(\d+))?/.exec(versionOutput);
  if (match?.[1] === undefined) return undefined;
  const first = Number(match[1]);
  return first === 1 && match[2] !== undefined ? Number(match[2]) : first;
}

function runVersionCheck(executable: string): Promise<JavaRuntime> {
  return new Promise((resolve, reject) => {
    execFile(executable, ['-version'], { timeout: VERSION_CHECK_TIMEOUT_MS }, (error, stdout, stderr) => {
      const output = `${stderr}${stdout}`;
      const majorVersion = parseJavaMajorVersion(output);
      if (error !== null || majorVersion === undefined) {
        reject(
          new HarnessError(
            'JAVA_NOT_FOUND',
            `'${executable} -version' did not report a Java version: ${error?.message ?? output}`,
            { tried: [executable] },
            { cause: error ?? undefined },
          ),
        );
      } else if (majorVersion < MINIMUM_JAVA_VERSION) {
        reject(
          new HarnessError(
            'JAVA_TOO_OLD',
            `${executable} is Java ${majorVersion}; ZooKeeper needs Java ${MINIMUM_JAVA_VERSION}+ (set JAVA_HOME to a newer JDK/JRE).`,
            { java: executable, version: output.split('\n')[0] ?? output, required: MINIMUM_JAVA_VERSION },
          ),
        );
      } else {
        resolve({ executable, majorVersion });
      }
    });
  });
}

// One `java -version` per executable per process; it costs a JVM start.
const checked = new Map<string, Promise<JavaRuntime>>();

/**
 * Finds Java: `javaHome` if given, else `$JAVA_HOME`, else `java` on `PATH`, and checks that it
 * is Java 11+.
 */
export async function locateJava(
  javaHome: string | undefined,
  env: Readonly<Record<string, string | undefined>>,
): Promise<JavaRuntime> {
  const executable = findJavaExecutable(javaHome, env);
  let runtime = checked.get(executable);
  if (runtime === undefined) {
    runtime = runVersionCheck(executable);
    checked.set(executable, runtime);
  }
  return await runtime;
}
