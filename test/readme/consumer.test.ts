import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createTempDir, removeTempDir } from '../../src/testing/temp-dir.js';
import { ROUND_TRIPS_MS, harnessBound } from '../support/bounds.js';
import { serverFixture } from '../support/server-fixture.js';
import type { ReadmeBlock } from './readme-blocks.js';
import { REPO, readReadme, run } from './readme-blocks.js';

/*
 * A newcomer's project: the packed tarball (what npm publishes) installed into a fresh project
 * outside this repository, for each way people load it, running the README's first example
 * against a real server. The TypeScript flavours compile it with strict settings and no
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
  tsModule?: 'node16' | 'nodenext' | 'bundler';
}

function flavours(): Flavour[] {
  const ts = firstOf('ts').code;
  const js = firstOf('js').code;
  const typescript = (tsModule: 'node16' | 'nodenext' | 'bundler', type: Flavour['type'] = 'module'): Flavour => {
    const module = tsModule === 'bundler' ? 'esnext' : tsModule;
    const compilerOptions = { strict: true, target: 'ES2022', module, moduleResolution: tsModule, types: [], outDir: 'out' };
    // A CommonJS file has no top-level await; its `import` compiles to require(), which loads our ES module on Node 20.19+.
    const code = type === 'commonjs' ? inAsyncMain(ts, (line) => line) : ts;
    const files = { 'first.ts': code, 'tsconfig.json': JSON.stringify({ compilerOptions, files: ['first.ts'] }) };
    return { name: `TypeScript, strict, module ${tsModule}${type === 'commonjs' ? ', CommonJS' : ''}`, type, tsModule, main: 'out/first.js', files };
  };
  return [
    { name: 'ES module (.mjs)', type: 'module', main: 'first.mjs', files: { 'first.mjs': js } },
    { name: 'CommonJS require (.cjs)', type: 'commonjs', main: 'first.cjs', files: { 'first.cjs': asCommonJs(js) } },
    typescript('node16'),
    typescript('nodenext'),
    typescript('bundler'),
    // node16 cannot import an ES module from CommonJS (TS1479), as the README says; nodenext can (TypeScript 5.8+).
    typescript('nodenext', 'commonjs'),
  ];
}

describe('a fresh project installs the packed package and runs the README\'s first example', { timeout: harnessBound(1, 1) + 7 * (INSTALL_MS + COMPILE_MS + ROUND_TRIPS_MS) }, () => {
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
      assert.match(result.output, /\/jobs\/job-\d{10}/, 'the example prints the node it created');
      const { children } = await zk.client.getChildren(`${chroot}/jobs`);
      assert.equal(children.length, 1, 'the example created its one job node on the server');
    });
  }
});
