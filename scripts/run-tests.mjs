#!/usr/bin/env node
// Runs every test file under test/ (or the files/folders given) with Node's own test runner.
// Node 20's runner does not discover .ts files itself, so we list them here.
//
// --fast-paths-off: runs with ZKLOCK_FAST_PATHS=off (src/recipes/queue/fast/switch.ts), by
// default the behavioural fault suite over every lock kind and the queue's fault tests, so that
// `npm test` proves every lock safe on the plain queue alone as well as with its fast paths.
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

function collect(path) {
  if (statSync(path).isFile()) return path.endsWith('.test.ts') ? [path] : [];
  return readdirSync(path)
    .sort()
    .flatMap((name) => collect(join(path, name)));
}

/** What runs again with the fast paths off: about 20 s more for `npm test` (two files side by side). */
const FAST_PATHS_OFF = ['test/recipes/lock-kinds.test.ts', 'test/recipes/faults.test.ts'];

const args = process.argv.slice(2);
const fastPathsOff = args.includes('--fast-paths-off');
const roots = args.filter((arg) => arg !== '--fast-paths-off');
const files = (roots.length > 0 ? roots : fastPathsOff ? FAST_PATHS_OFF : ['test']).flatMap(collect);
if (files.length === 0) {
  console.error('run-tests: no test files found');
  process.exit(1);
}
// Tests start real ZooKeeper JVMs; on a 2-core machine two files at a time is the sweet spot.
const concurrency = process.env.ZKLOCK_TEST_CONCURRENCY ?? '2';
const result = spawnSync(
  process.execPath,
  ['--import', 'tsx', '--test', `--test-concurrency=${concurrency}`, ...files],
  { stdio: 'inherit', env: fastPathsOff ? { ...process.env, ZKLOCK_FAST_PATHS: 'off' } : process.env },
);
process.exit(result.status ?? 1);
