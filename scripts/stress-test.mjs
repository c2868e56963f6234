#!/usr/bin/env node
// Runs the test suite (`node scripts/run-tests.mjs`, with any files or folders given) while one
// CPU burner per core keeps every core busy: a fragile wall-clock bound fails here rather than on
// a busy CI machine. Builds first, since the CLI tests run dist/. Prints the suite's duration and
// exits with its code.
//
// The burners can never outlive the run: they are killed when the suite ends (or this script is
// interrupted, which interrupts the suite too), and each also stops by itself after
// ZKLOCK_STRESS_LIMIT_MS (default 30 minutes) or as soon as its parent is gone.
import { spawn, spawnSync } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';

const BURN = '--burn';

if (process.argv[2] === BURN) {
  burn(Number(process.argv[3]));
} else {
  await stress(process.argv.slice(2));
}

/** Spins until `limitMs` has passed or the parent is gone; checks both every few ms. */
function burn(limitMs) {
  const parent = process.ppid;
  const stopAt = Date.now() + limitMs;
  while (Date.now() < stopAt && process.ppid === parent) {
    const sliceEnd = Date.now() + 5;
    while (Date.now() < sliceEnd);
  }
}

async function stress(testArgs) {
  const build = spawnSync('npm', ['run', 'build'], { stdio: 'inherit' });
  if (build.status !== 0) process.exit(build.status ?? 1);

  const limitMs = Number(process.env.ZKLOCK_STRESS_LIMIT_MS ?? 30 * 60_000);
  const cores = availableParallelism();
  const self = fileURLToPath(import.meta.url);
  const burners = Array.from({ length: cores }, () => spawn(process.execPath, [self, BURN, String(limitMs)], { stdio: 'ignore' }));
  const stopBurners = () => {
    for (const burner of burners) burner.kill('SIGKILL');
  };
  process.on('exit', stopBurners);
  console.log(`stress-test: ${cores} CPU burner(s) running beside the suite`);

  const started = performance.now();
  // In its own process group, so that a signal to this script reaches every process of the suite
  // (run-tests.mjs waits for the test runner synchronously and cannot pass signals on).
  const suite = spawn(process.execPath, [fileURLToPath(new URL('./run-tests.mjs', import.meta.url)), ...testArgs], { stdio: 'inherit', detached: true });
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
    process.on(signal, () => {
      stopBurners();
      try {
        process.kill(-suite.pid, signal);
      } catch {
        // The suite has already ended.
      }
    });
  }
  const [code, signal] = await new Promise((resolve) => suite.on('exit', (...result) => resolve(result)));
  stopBurners();
  const seconds = (performance.now() - started) / 1000;
  console.log(`stress-test: suite ${code === 0 ? 'passed' : `failed (${signal ?? `exit ${code}`})`} in ${seconds.toFixed(0)} s with ${cores} core(s) busy`);
  process.exit(code ?? 1);
}
