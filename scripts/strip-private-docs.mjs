#!/usr/bin/env node
// tsc copies the doc comments of private members into the .d.ts files. Those comments explain
// our implementation to ourselves; a user reading the declarations (or an editor showing them)
// cannot call those members, so after the build we drop every doc comment that precedes a
// `private` declaration and keep the declaration itself (it keeps the class nominal).
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const PRIVATE_DOC = /^[ \t]*\/\*\*(?:[^*]|\*(?!\/))*\*\/\n(?=[ \t]*private )/gm;

function declarations(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return declarations(path);
    return entry.name.endsWith('.d.ts') ? [path] : [];
  });
}

for (const file of declarations(process.argv[2] ?? 'dist')) {
  const text = readFileSync(file, 'utf8');
  const stripped = text.replace(PRIVATE_DOC, '');
  if (stripped !== text) writeFileSync(file, stripped);
}
