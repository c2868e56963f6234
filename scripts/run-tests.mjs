#!/usr/bin/env node
// Runs every test file under test/ (or the files/folders given) with Node's own test runner.
// Node 20's runner does not discover .ts files itself, so we list them here.
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

function collect(path) {
  if (statSync(path).isFile()) return path.endsWith('.test.ts') ? [path] : [];
  return readdirSync(path)
    .sort()
    .flatMap((name) => collect(join(path, name)));
}

const roots = process.argv.slice(2);
const files = (roots.length > 0 ? roots : ['test']).flatMap(collect);
if (files.length === 0) {
  console.error('run-tests: no test files found');
  process.exit(1);
}
// Tests start real ZooKeeper JVMs; on a 2-core machine two files at a time is the sweet spot.
const concurrency = process.env.ZKLOCK_TEST_CONCURRENCY ?? '2';
const result = spawnSync(
  process.execPath,
  ['--import', 'tsx', '--test', `--test-concurrency=${concurrency}`, ...files],
  { stdio: 'inherit' },
);
process.exit(result.status ?? 1);
