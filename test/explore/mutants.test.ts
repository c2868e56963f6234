import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { join, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { applyMutant, mutantPatches, mutantsDir } from '../../explore/mutant-patches.js';

/**
 * The mutants (`npm run explore:mutants`) are patches of the recipes' source: when the recipes move
 * on, a patch stops applying and the mutant quietly stops existing (two did, unnoticed, when the
 * exclusive queue and the semaphore changed). No server: `git apply --check` against this tree.
 */

const repo = resolve(import.meta.dirname, '..', '..');

describe('explorer mutants', () => {
  const patches = mutantPatches();

  it('has the mutants the explorer is measured by', () => {
    assert.ok(patches.length >= 5, `only ${patches.length} patches in ${mutantsDir}`);
  });

  for (const patch of patches) {
    it(`${patch} applies to this tree and breaks only the library's source`, () => {
      applyMutant(repo, patch, true);
      // A mutant of the explorer or of a test would measure nothing: the numstat lists each file it changes.
      const files = execFileSync('git', ['apply', '--numstat', join(mutantsDir, patch)], { cwd: repo })
        .toString()
        .trim()
        .split('\n')
        .map((line) => line.split('\t')[2]!);
      assert.ok(files.length > 0, `${patch} changes nothing`);
      for (const file of files) assert.match(file, /^src\//, `${patch} changes ${file}`);
    });
  }
});
