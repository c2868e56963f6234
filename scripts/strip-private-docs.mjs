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

/**
 * Classes split into a chain of parts, one file each (docs/architecture.md): their members are
 * protected only so that the parts can reach each other, so their declarations show them as
 * private, as they were before the split, and not as API for a subclass (nor the internal
 * types they name). An abstract member is dropped: the part that implements it declares it.
 */
const SPLIT_CLASSES = ['SessionCore', 'RequestPipeline', 'SessionAuth', 'SessionHandshake', 'DialLoop', 'Session', 'ClientSession', 'ClientWatches', 'ZooKeeperClient'];
const SPLIT_CLASS = new RegExp(`^export declare (?:abstract )?class (?:${SPLIT_CLASSES.join('|')})\\b`);

/** The protected members of SPLIT_CLASSES, as `private name;` (a member over several lines, or overloaded, once). */
function hideProtected(text) {
  const out = [];
  let inside = false;
  let skipping = false;
  let depth = 0;
  for (const line of text.split('\n')) {
    if (skipping) {
      depth += (line.match(/[{(]/g) ?? []).length - (line.match(/[})]/g) ?? []).length;
      if (depth <= 0 && line.trimEnd().endsWith(';')) skipping = false;
      continue;
    }
    if (/^export declare /.test(line)) inside = SPLIT_CLASS.test(line);
    const member = inside ? /^(\s+)protected (abstract )?(readonly )?(?:get )?([\w$]+)/.exec(line) : null;
    if (!member) {
      out.push(line);
      continue;
    }
    depth = (line.match(/[{(]/g) ?? []).length - (line.match(/[})]/g) ?? []).length;
    skipping = !(depth <= 0 && line.trimEnd().endsWith(';'));
    const hidden = `${member[1]}private ${member[3] ?? ''}${member[4]};`;
    if (!member[2] && out.at(-1) !== hidden) out.push(hidden);
  }
  return out.join('\n');
}

for (const file of declarations(process.argv[2] ?? 'dist')) {
  const text = readFileSync(file, 'utf8');
  const stripped = hideProtected(text).replace(PRIVATE_DOC, '');
  if (stripped !== text) writeFileSync(file, stripped);
}
