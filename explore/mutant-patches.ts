import { execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';

/** Where the mutants live: small breakages of the recipes, one `git diff` each (see mutants.ts). */
export const mutantsDir = resolve(import.meta.dirname, 'mutants');

/** The mutant patches' file names, sorted; `only` keeps those whose name contains it. */
export function mutantPatches(only?: string): string[] {
  return readdirSync(mutantsDir)
    .filter((f) => f.endsWith('.patch'))
    .filter((f) => only === undefined || f.includes(only))
    .sort();
}

/**
 * Applies `patch` to the tree in `dir` (`check`: only says whether it would). Throws with git's
 * message, on one line, when it does not apply: the recipes moved on under the mutant.
 */
export function applyMutant(dir: string, patch: string, check = false): void {
  try {
    execFileSync('git', ['apply', ...(check ? ['--check'] : []), join(mutantsDir, patch)], { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
  } catch (error) {
    throw new Error(`${patch} does not apply: ${String((error as { stderr?: Buffer }).stderr ?? error).trim().replaceAll('\n', '; ')}`);
  }
}
