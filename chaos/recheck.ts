/**
 * Checks a finished run again and rewrites its report, without running anything:
 * `node --import tsx chaos/recheck.ts chaos/results/seed-1-600s` (after a change to the checker or the report).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RunHistory } from './results.js';
import { writeResults } from './results.js';

const dir = process.argv[2];
if (!dir) throw new Error('usage: recheck.ts <results directory>');
const history = JSON.parse(readFileSync(join(dir, 'history.json'), 'utf8')) as RunHistory;
const { summary, markdown } = writeResults(dir, history);
console.log(markdown);
process.exitCode = summary.check.ok ? 0 : 1;
