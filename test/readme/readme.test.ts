import assert from 'node:assert/strict';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createTempDir, removeTempDir } from '../../src/testing/temp-dir.js';
import { harnessBound } from '../support/bounds.js';
import { serverFixture } from '../support/server-fixture.js';
import type { ReadmeBlock } from './readme-blocks.js';
import { REPO, moduleText, readReadme, run, scratchRoot } from './readme-blocks.js';

/*
 * Every ```ts and ```js block of README.md runs as a user would paste it: TypeScript through tsx
 * (after one strict type-check of them all against the built declarations), JavaScript with
 * plain node, so a JavaScript example that needs TypeScript (`await using`) fails here. A block
 * may use `client`, which the one-line prelude connects to a chroot of its own, so blocks
 * cannot see each other's nodes. Blocks fenced as ```ts sketch are listed as skipped.
 */

const blocks = readReadme();
const fileOf = (block: ReadmeBlock): string => `readme-L${block.line}.${block.lang === 'ts' ? 'ts' : 'mjs'}`;
/** A block may start servers and ensembles of its own (the harness section does). */
const BLOCK_MS = harnessBound(4, 4);

describe('README code blocks run as pasted', { timeout: blocks.length * BLOCK_MS }, () => {
  const zk = serverFixture();
  let dir: string;

  before(async () => {
    assert.ok(existsSync(join(REPO, 'dist/index.d.ts')), 'the README runs against the built package: npm run build first');
    dir = await createTempDir('readme', scratchRoot());
    for (const block of blocks) writeFileSync(join(dir, fileOf(block)), moduleText(block));
  });

  after(async () => {
    if (dir) await removeTempDir(dir);
  });

  test('the README has runnable blocks of both languages', () => {
    const runnable = blocks.filter((b) => !b.sketch);
    assert.ok(runnable.some((b) => b.lang === 'ts') && runnable.some((b) => b.lang === 'js'), 'expected ```ts and ```js blocks');
  });

  test('its TypeScript blocks type-check (strict, against dist/*.d.ts, no "types" listed)', async () => {
    const files = blocks.filter((b) => b.lang === 'ts' && !b.sketch).map(fileOf);
    const compilerOptions = { strict: true, target: 'ES2022', module: 'nodenext', moduleResolution: 'nodenext', types: [], noEmit: true };
    writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions, files }));
    const tsc = await run(process.execPath, [join(REPO, 'node_modules/typescript/bin/tsc'), '-p', dir], { cwd: dir, ms: BLOCK_MS });
    // A file's line L is the README block's line L - 1 + its fence line; the message names the file (readme-L<fence>).
    assert.equal(tsc.code, 0, tsc.output);
  });

  for (const block of blocks) {
    const skip = block.sketch ? `README.md:${block.line} is a sketch (\`\`\`${block.lang} sketch), not run` : false;
    test(`README.md:${block.line} (${block.lang}) runs`, { skip }, async () => {
      const chroot = `/readme/L${block.line}`;
      await zk.client.ensurePath(chroot);
      const args = block.lang === 'ts' ? ['--import', 'tsx', fileOf(block)] : [fileOf(block)];
      const result = await run(process.execPath, args, { cwd: dir, env: { ZOOKEEPER_CONNECT: `${zk.server.connectString}${chroot}` }, ms: BLOCK_MS });
      assert.equal(result.code, 0, `README.md:${block.line} failed (its line N is ${fileOf(block)}:N+1):\n${result.output}`);
    });
  }
});
