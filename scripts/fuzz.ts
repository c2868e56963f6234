// Long decoder fuzz run: npm run fuzz -- [iterations] [seed]
import { fuzz } from '../test/protocol/fuzz.js';

const iterations = Number(process.argv[2] ?? 2_000_000);
const seed = Number(process.argv[3] ?? Date.now() % 0x7fffffff);
const started = Date.now();
fuzz(iterations, seed);
console.log(`fuzz: ${iterations} cases, seed ${seed}, no failure, ${((Date.now() - started) / 1000).toFixed(1)} s`);
