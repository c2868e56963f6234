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
const TSC = join(REPO, 'node_modules/typescript/bin/tsc');

const blocks = readReadme().filter((b) => !b.sketch);
const firstOf = (lang: ReadmeBlock['lang']): ReadmeBlock => {
  const block = blocks.find((b) => b.lang === lang);
  assert.ok(block, `the README has no runnable ${lang} block`);
  return block;
};

/** The same code loaded with require(): each `import { … } from '…'` as a require, the rest inside an async function. */
function asCommonJs(code: string): string {
  const body = code.replace(/^import \{([^}]*)\} from '([^']+)';$/gm, (_, names: string, from: string) => `const {${names.replace(/\bas\b/g, ':')}} = require('${from}');`);
  assert.ok(!/^import /m.test(body), 'an import the CommonJS rewrite does not handle');
  return `'use strict';\n(async () => {\n${body}\n})().catch((error) => {\n  console.error(error);\n  process.exitCode = 1;\n});\n`;
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
  const typescript = (tsModule: 'node16' | 'nodenext' | 'bundler'): Flavour => {
    const module = tsModule === 'bundler' ? 'esnext' : tsModule;
    const compilerOptions = { strict: true, target: 'ES2022', module, moduleResolution: tsModule, types: [], outDir: 'out' };
    return { name: `TypeScript, strict, module ${tsModule}`, type: 'module', tsModule, main: 'out/first.js', files: { 'first.ts': ts, 'tsconfig.json': JSON.stringify({ compilerOptions, files: ['first.ts'] }) } };
  };
  return [
    { name: 'ES module (.mjs)', type: 'module', main: 'first.mjs', files: { 'first.mjs': js } },
    { name: 'CommonJS require (.cjs)', type: 'commonjs', main: 'first.cjs', files: { 'first.cjs': asCommonJs(js) } },
    typescript('node16'),
    typescript('nodenext'),
    typescript('bundler'),
  ];
}

describe('a fresh project installs the packed package and runs the README\'s first example', { timeout: harnessBound(1, 1) + 6 * (INSTALL_MS + ROUND_TRIPS_MS) }, () => {
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
        const tsc = await run(process.execPath, [TSC, '-p', '.'], { cwd: project, ms: ROUND_TRIPS_MS * 3 });
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
