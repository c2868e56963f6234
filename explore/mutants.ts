import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { signatureOf } from './explorer.js';
import { applyMutant, mutantPatches } from './mutant-patches.js';
import type { Violation } from './execute.js';
import type { Scenario } from './scenario.js';

/**
 * `npm run explore:mutants -- [--minutes 2] [--seed N] [--only name]`: does the explorer catch a
 * broken recipe? Each `explore/mutants/*.patch` is applied to this commit in a scratch `git
 * worktree`, and the explorer runs there (keep-going, `--minutes` each). First the same run on the
 * unpatched tree gives the baseline, whose failures are printed with their replay (a fixed tree shows
 * none): a mutant is caught when its run breaks an invariant in a way
 * the baseline did not (a new signature: invariant, lock family, error code), so known defects of
 * the tree itself do not count as catches, nor does a scenario that, replayed `--confirm` times on the
 * unpatched tree, breaks it the same way. Prints a table with the replay of each catch; a patch that
 * no longer applies is reported and the run goes on. Exit code 1 when a mutant was not caught or not
 * applied, or the baseline failed.
 */

const { values } = parseArgs({
  options: {
    minutes: { type: 'string', default: '2' },
    seed: { type: 'string', default: '27' },
    workers: { type: 'string', default: '6' },
    only: { type: 'string' },
    confirm: { type: 'string', default: '3' },
  },
});

const repo = resolve(import.meta.dirname, '..');
/** Every tree of the run is this commit (the baseline and each mutant), whatever is committed meanwhile. */
const commit = execFileSync('git', ['-C', repo, 'rev-parse', 'HEAD']).toString().trim();

interface Sighting {
  signature: string;
  foundAfter: number;
  foundAtMs: number;
  violation: { text: string };
  seed: number;
  path: string;
}

interface RunResult {
  scenarios: number;
  sightings: Sighting[];
  failure: { scenario: Scenario; violations: Violation[] } | null;
}

/** The search every tree gets: the same seed, time and workers, going on past failures. */
const searchArgs = ['--keep-going', '--minutes', values.minutes, '--seed', values.seed, '--workers', values.workers];

/** Runs the explorer in `dir` with `explorerArgs` and returns what it saw (its --json line). */
function runExplorer(dir: string, explorerArgs: string[]): Promise<RunResult> {
  const args = ['--import', 'tsx', 'explore/run.ts', '--json', ...explorerArgs];
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, args, { cwd: dir, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.on('error', reject);
    child.on('close', () => {
      const line = out.split('\n').find((l) => l.startsWith('{"seed"'));
      if (line === undefined) return reject(new Error(`no result from the explorer in ${dir}:\n${out.slice(-2000)}`));
      resolvePromise(JSON.parse(line) as RunResult);
    });
  });
}

function scratch(name: string): string {
  const dir = join(mkdtempSync(join(tmpdir(), 'zklock-mutant-')), name);
  execFileSync('git', ['-C', repo, 'worktree', 'add', '--detach', dir, commit], { stdio: 'ignore' });
  symlinkSync(join(repo, 'node_modules'), join(dir, 'node_modules'));
  return dir;
}

function removeScratch(dir: string): void {
  execFileSync('git', ['-C', repo, 'worktree', 'remove', '--force', dir], { stdio: 'ignore' });
  rmSync(resolve(dir, '..'), { recursive: true, force: true });
}

const patches = mutantPatches(values.only);

const red = (text: string): string => (process.stdout.isTTY ? `\x1b[31m${text}\x1b[0m` : text);
/** The replay of a sighting, in a tree where `patch` (if any) is applied: what the table prints. */
function replay(s: Sighting, patch?: string): string {
  const apply = patch === undefined ? '' : `git apply explore/mutants/${patch} && `;
  return `${apply}npm run explore -- --seed ${s.seed} --path ${s.path}`;
}

console.log(`baseline: the unpatched tree, ${values.minutes} min, seed ${values.seed}`);
const baseDir = scratch('baseline');
let baseline = new Set<string>();
/** A failure of the unpatched tree is a defect of the tree itself: reported with its replay, never a catch. */
const baselineRows: string[] = [];
try {
  const base = await runExplorer(baseDir, searchArgs);
  baseline = new Set(base.sightings.map((s) => s.signature));
  for (const s of base.sightings) {
    baselineRows.push(`| ${s.signature} | ${s.foundAfter}, ${(s.foundAtMs / 1000).toFixed(1)} | ${s.violation.text.slice(0, 160).replaceAll('|', '/')} | \`${replay(s)}\` |`);
  }
  console.log(`baseline: ${base.scenarios} scenarios; ${base.sightings.length === 0 ? 'no invariant broken' : red(`${base.sightings.length} failure(s) of the unpatched tree:\n${baselineRows.join('\n')}`)}`);
} catch (error) {
  removeScratch(baseDir);
  throw error;
}

/**
 * Whether the scenario that broke the mutant also breaks the unpatched tree the same way, replayed
 * there `--confirm` times: the baseline search meets a timing-dependent failure by chance or not,
 * so a signature it did not show is not yet proof that the mutant caused it.
 */
async function failsUnpatched(s: Sighting): Promise<boolean> {
  const result = await runExplorer(baseDir, ['--seed', String(s.seed), '--path', s.path, '--repeat', values.confirm]);
  const failure = result.failure;
  return failure !== null && failure.violations.some((v) => signatureOf(v, failure.scenario) === s.signature);
}

const rows: string[] = ['| mutant | caught | after (scenarios, s) | by | replay |', '|---|---|---|---|---|'];
/** Mutants not caught, not applied or whose run broke: any of them makes the exit code 1. */
let bad = 0;
for (const patch of patches) {
  const name = basename(patch, '.patch');
  const dir = scratch(name);
  let row: string;
  try {
    // A patch the tree has outgrown is a finding of this run, not a reason to stop the others.
    applyMutant(dir, patch);
    if (!existsSync(join(dir, 'explore', 'run.ts'))) throw new Error('the explorer is not in this commit');
    const result = await runExplorer(dir, searchArgs);
    const fresh = result.sightings.filter((s) => !baseline.has(s.signature)).sort((a, b) => a.foundAtMs - b.foundAtMs);
    let first: Sighting | undefined;
    const alsoUnpatched: string[] = [];
    for (const s of fresh) {
      if (!(await failsUnpatched(s))) {
        first = s;
        break;
      }
      alsoUnpatched.push(`${s.signature} (\`${replay(s)}\` fails unpatched too)`);
    }
    if (alsoUnpatched.length > 0) console.log(red(`${name}: not counted, the unpatched tree fails these as well: ${alsoUnpatched.join('; ')}`));
    if (first === undefined) bad++;
    row = first
      ? `| ${name} | yes | ${first.foundAfter}, ${(first.foundAtMs / 1000).toFixed(1)} | ${first.signature}: ${first.violation.text.slice(0, 160).replaceAll('|', '/')} | \`${replay(first, patch)}\` |`
      : red(`| ${name} | NO | ${result.scenarios} scenarios | ${alsoUnpatched.length > 0 ? `only what the unpatched tree does too: ${alsoUnpatched.join('; ')}` : '—'} | — |`);
  } catch (error) {
    bad++;
    row = red(`| ${name} | ERROR | — | ${(error as Error).message.slice(0, 300).replaceAll('|', '/')} | — |`);
  } finally {
    removeScratch(dir);
  }
  rows.push(row);
  console.log(row);
}
removeScratch(baseDir);
console.log(`\n${rows.join('\n')}`);
if (baselineRows.length > 0) console.log(red(`\nthe unpatched tree failed too:\n| signature | after (scenarios, s) | violation | replay |\n|---|---|---|---|\n${baselineRows.join('\n')}`));
process.exit(bad > 0 || baselineRows.length > 0 ? 1 : 0);
