import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { ZooKeeperError } from '../../src/index.js';
import { createTempDir, removeTempDir } from '../../src/testing/temp-dir.js';
import { ROUND_TRIPS_MS, harnessBound } from '../support/bounds.js';
import { serverFixture } from '../support/server-fixture.js';
import type { ReadmeBlock } from './readme-blocks.js';
import { REPO, firstUnmatched, readReadme, readmeTsconfig, run, statedOutput } from './readme-blocks.js';

/*
 * A newcomer's project: the packed tarball (what npm publishes) installed into a fresh project
 * outside this repository, for each way people load it, running the README's first example of
 * its language against a real server (the TypeScript one is the first screen's lock, compiled once
 * more with the first screen's own tsconfig.json). The TypeScript flavours compile it with strict settings and no
 * "types" listed (so our declarations must bring Node's types themselves), then run the output.
 */

/** npm install from the registry (or its cache): two small packages and @types/node, on a busy machine. */
const INSTALL_MS = 120_000;
/** tsc reading all of @types/node besides our declarations (no skipLibCheck: ours must stand alone), on a busy machine. */
const COMPILE_MS = INSTALL_MS;
const TSC = join(REPO, 'node_modules/typescript/bin/tsc');

const blocks = readReadme().filter((b) => !b.sketch);
const firstOf = (lang: ReadmeBlock['lang']): ReadmeBlock => {
  const block = blocks.find((b) => b.lang === lang);
  assert.ok(block, `the README has no runnable ${lang} block`);
  return block;
};

/** The code with its top-level statements inside an async function, which CommonJS needs for `await` (its imports stay first). */
function inAsyncMain(code: string, imports: (line: string) => string): string {
  const lines = code.split('\n');
  const head = lines.filter((l) => l.startsWith('import ')).map(imports);
  const body = lines.filter((l) => !l.startsWith('import '));
  return `${head.join('\n')}\n(async () => {\n${body.join('\n')}\n})().catch((error) => {\n  console.error(error);\n  process.exitCode = 1;\n});\n`;
}

/** The same code loaded with require(): each `import { … } from '…'` as a require, the rest inside an async function. */
function asCommonJs(code: string): string {
  const required = inAsyncMain(code, (line) => {
    const named = /^import \{([^}]*)\} from '([^']+)';$/.exec(line);
    assert.ok(named, `an import the CommonJS rewrite does not handle: ${line}`);
    return `const {${(named[1] ?? '').replace(/\bas\b/g, ':')}} = require('${named[2] ?? ''}');`;
  });
  return `'use strict';\n${required}`;
}

interface Flavour {
  name: string;
  type: 'module' | 'commonjs';
  files: Record<string, string>;
  /** What to run, relative to the project, after the install (and the compile, for TypeScript). */
  main: string;
  tsModule?: 'node16' | 'nodenext' | 'bundler' | 'node10';
  /** The README block it runs: its output must be what the block says it prints. */
  block: ReadmeBlock;
}

function flavours(): Flavour[] {
  const tsBlock = firstOf('ts');
  const jsBlock = firstOf('js');
  const ts = tsBlock.code;
  const js = jsBlock.code;
  const typescript = (tsModule: NonNullable<Flavour['tsModule']>, type: Flavour['type'] = 'module'): Flavour => {
    // bundler and node10 (`moduleResolution: "node"`, which reads no `exports`: our top-level types and typesVersions serve it) take any ES module output.
    const module = tsModule === 'bundler' || tsModule === 'node10' ? 'esnext' : tsModule;
    const compilerOptions = { strict: true, target: 'ES2022', module, moduleResolution: tsModule, types: [], outDir: 'out' };
    // A CommonJS file has no top-level await; its `import` compiles to require(), which loads our ES module on Node 20.19+.
    const code = type === 'commonjs' ? inAsyncMain(ts, (line) => line) : ts;
    const files = { 'first.ts': code, 'tsconfig.json': JSON.stringify({ compilerOptions, files: ['first.ts'] }) };
    return { name: `TypeScript, strict, module ${tsModule}${type === 'commonjs' ? ', CommonJS' : ''}`, type, tsModule, main: 'out/first.js', files, block: tsBlock };
  };
  return [
    { name: 'ES module (.mjs)', type: 'module', main: 'first.mjs', files: { 'first.mjs': js }, block: jsBlock },
    { name: 'CommonJS require (.cjs)', type: 'commonjs', main: 'first.cjs', files: { 'first.cjs': asCommonJs(js) }, block: jsBlock },
    // The first screen as written: `npm pkg set type=module`, its tsconfig.json, first.ts, `npx tsc && node out/first.js`.
    { name: 'TypeScript, the README\'s first screen', type: 'module', tsModule: 'nodenext', main: 'out/first.js', files: { 'first.ts': ts, 'tsconfig.json': readmeTsconfig() }, block: tsBlock },
    typescript('node16'),
    typescript('nodenext'),
    typescript('bundler'),
    typescript('node10'),
    // node16 cannot import an ES module from CommonJS (TS1479), as the README says; nodenext can (TypeScript 5.8+).
    typescript('nodenext', 'commonjs'),
  ];
}

describe('a fresh project installs the packed package and runs the README\'s first example', { timeout: harnessBound(1, 1) + 9 * (INSTALL_MS + COMPILE_MS + ROUND_TRIPS_MS) }, () => {
  const zk = serverFixture();
  let dir: string;
  let tarball: string;

  before(async () => {
    assert.ok(existsSync(join(REPO, 'dist/index.d.ts')), 'the tarball packs the built package: npm run build first');
    dir = await createTempDir('consumer');
    // --ignore-scripts: pack dist/ as built; prepack would build it again.
    const pack = await run('npm', ['pack', '--ignore-scripts', '--pack-destination', dir], { cwd: REPO, ms: INSTALL_MS });
    assert.equal(pack.code, 0, pack.output);
    const packed = readdirSync(dir).find((f) => f.endsWith('.tgz'));
    assert.ok(packed, pack.output);
    tarball = join(dir, packed);
  });

  after(async () => {
    if (dir) await removeTempDir(dir);
  });

  for (const flavour of flavours()) {
    test(flavour.name, async () => {
      const project = join(dir, flavour.name.replace(/\W+/g, '-'));
      mkdirSync(project);
      writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'newcomer', private: true, type: flavour.type }));
      for (const [file, text] of Object.entries(flavour.files)) writeFileSync(join(project, file), text);
      const install = await run('npm', ['install', tarball, '--no-audit', '--no-fund', '--prefer-offline'], { cwd: project, ms: INSTALL_MS });
      assert.equal(install.code, 0, install.output);
      if (flavour.tsModule) {
        const tsc = await run(process.execPath, [TSC, '-p', '.'], { cwd: project, ms: COMPILE_MS });
        assert.equal(tsc.code, 0, `tsc (module ${flavour.tsModule}):\n${tsc.output}`);
      }
      const chroot = `/consumer-${flavour.name.replace(/\W+/g, '-')}`;
      await zk.client.ensurePath(chroot);
      const result = await run(process.execPath, [flavour.main], { cwd: project, env: { ZOOKEEPER_CONNECT: `${zk.server.connectString}${chroot}` }, ms: ROUND_TRIPS_MS });
      assert.equal(result.code, 0, result.output);
      const missing = firstUnmatched(result.stdout, statedOutput(flavour.block));
      assert.equal(missing, undefined, `README.md:${flavour.block.line} says it prints ${String(missing)}:\n${result.output}`);
      if (flavour.block.lang === 'js') {
        assert.match(result.output, /\/jobs\/job-\d{10}/, 'the example prints the node it created');
        const { children } = await zk.client.getChildren(`${chroot}/jobs`);
        assert.equal(children.length, 1, 'the example created its one job node on the server');
      } else {
        // The lock was taken on the server, then released: no contender node under its path (a container the server may have removed since).
        const children = await zk.client.getChildren(`${chroot}/locks/first`).then(
          (r) => r.children,
          (error: unknown) => (error instanceof ZooKeeperError && error.code === 'NONODE' ? [] : Promise.reject(error)),
        );
        assert.deepEqual(children, [], 'the example released its lock');
      }
    });
  }
});
