#!/usr/bin/env node
// Fails when the modules under src/ import each other in a cycle, and prints each cycle found.
// Type-only imports (`import type`, `export type ... from`, `import { type A }` where every name is
// a type, `import('...')` in a type) count as much as the others: they vanish from the JavaScript,
// but a cycle of them still means that no part can be read, or moved, without the others, which is
// what the layering of docs/architecture.md is for. Each cycle is printed with the kind of each
// edge, so that a cycle only types close is easy to tell apart.
// Usage: node scripts/check-cycles.mjs [--graph]   (--graph prints the import count per folder)
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

/**
 * Edges tolerated for now, each `from -> to` (paths from the repository root). Empty since the last
 * cycle, in src/recipes/, was broken (docs/architecture.md, "Import cycles"). An edge listed here
 * that no longer exists fails the check too, so the list cannot go stale.
 */
const ALLOWED = [];

function sources(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return /\.(m?ts)$/.test(entry.name) && !entry.name.endsWith('.d.ts') ? [path] : [];
  });
}

/** The relative imports of one file's text: [specifier, typeOnly]. */
function importsOf(text) {
  const found = [];
  // Static import/export ... from '...', over several lines; comments are blanked first.
  const code = text.replace(/\/\*[\s\S]*?\*\//g, (c) => c.replace(/[^\n]/g, ' ')).replace(/(^|[^:'"`])\/\/.*$/gm, '$1');
  const statement = /^\s*(import|export)\s+(type\s+)?([^;'"]*?)\s*from\s*['"](\.{1,2}\/[^'"]+)['"]/gm;
  for (const m of code.matchAll(statement)) {
    const names = m[3];
    const braces = /^\{([\s\S]*)\}$/.exec(names.trim());
    const everyNameTyped = braces !== null && braces[1].split(',').map((n) => n.trim()).filter(Boolean).every((n) => n.startsWith('type '));
    found.push([m[4], m[2] !== undefined || everyNameTyped]);
  }
  for (const m of code.matchAll(/^\s*import\s+['"](\.{1,2}\/[^'"]+)['"]/gm)) found.push([m[1], false]);
  // import('...'): a value when awaited or called, a type after `typeof` or in a type position.
  for (const m of code.matchAll(/(typeof\s+)?\bimport\(\s*['"](\.{1,2}\/[^'"]+)['"]\s*\)/g)) found.push([m[2], m[1] !== undefined || !/await\s*$|\(\s*$|=\s*$/.test(code.slice(Math.max(0, m.index - 12), m.index))]);
  return found;
}

const files = sources(join(root, 'src')).map((path) => relative(root, path).split('\\').join('/'));
const known = new Set(files);
/** from -> Map(to -> typeOnly), typeOnly false as soon as one import of `to` is a value. */
const graph = new Map(files.map((file) => [file, new Map()]));
for (const file of files) {
  for (const [spec, typeOnly] of importsOf(readFileSync(join(root, file), 'utf8'))) {
    const base = normalize(join(dirname(file), spec)).split('\\').join('/');
    const to = [base.replace(/\.js$/, '.ts'), base.replace(/\.mjs$/, '.mts'), base].find((candidate) => known.has(candidate));
    if (!to) continue;
    const edges = graph.get(file);
    edges.set(to, (edges.get(to) ?? true) && typeOnly);
  }
}

if (process.argv.includes('--graph')) {
  let total = 0;
  const byFolder = new Map();
  for (const [from, edges] of graph) {
    total += edges.size;
    const folder = dirname(from);
    byFolder.set(folder, (byFolder.get(folder) ?? 0) + edges.size);
  }
  for (const [folder, count] of [...byFolder].sort()) console.log(`${String(count).padStart(5)}  ${folder}`);
  console.log(`${String(total).padStart(5)}  imports between ${files.length} modules of src/`);
}

let failed = false;
for (const edge of ALLOWED) {
  const [from, to] = edge.split(' -> ');
  if (graph.get(from)?.has(to)) graph.get(from).delete(to);
  else {
    console.error(`check-cycles: the allowed edge ${edge} no longer exists: remove it from ALLOWED in scripts/check-cycles.mjs`);
    failed = true;
  }
}

// Tarjan's strongly connected components: every component of more than one module holds a cycle.
let index = 0;
const stack = [];
const state = new Map();
const components = [];
function connect(v) {
  const s = { index, low: index, onStack: true };
  index++;
  state.set(v, s);
  stack.push(v);
  for (const w of graph.get(v).keys()) {
    const t = state.get(w);
    if (!t) {
      connect(w);
      s.low = Math.min(s.low, state.get(w).low);
    } else if (t.onStack) s.low = Math.min(s.low, t.index);
  }
  if (s.low === s.index) {
    const component = [];
    let w;
    do {
      w = stack.pop();
      state.get(w).onStack = false;
      component.push(w);
    } while (w !== v);
    if (component.length > 1 || graph.get(v).has(v)) components.push(component.sort());
  }
}
for (const file of files) if (!state.has(file)) connect(file);

/** One shortest cycle through `start` inside `members`, by breadth-first search. */
function cycleThrough(start, members) {
  const previous = new Map([[start, undefined]]);
  const queue = [start];
  while (queue.length > 0) {
    const v = queue.shift();
    for (const w of graph.get(v).keys()) {
      if (!members.has(w)) continue;
      if (w === start) {
        const path = [v];
        while (previous.get(path[0]) !== undefined) path.unshift(previous.get(path[0]));
        return [...path, start];
      }
      if (!previous.has(w)) {
        previous.set(w, v);
        queue.push(w);
      }
    }
  }
  return [start];
}

for (const component of components) {
  failed = true;
  const members = new Set(component);
  const cycle = cycleThrough(component[0], members);
  const steps = cycle.slice(1).map((to, i) => `  ${graph.get(cycle[i]).get(to) ? 'type ' : 'value'} ${cycle[i]} -> ${to}`);
  console.error(`check-cycles: ${component.length} modules import each other in a cycle:\n    ${component.join('\n    ')}\n  for instance:\n${steps.join('\n')}`);
}
if (failed) process.exit(1);
console.log(`check-cycles: no import cycle among ${files.length} modules of src/`);
