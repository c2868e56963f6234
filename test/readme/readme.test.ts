import assert from 'node:assert/strict';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createTempDir, removeTempDir } from '../../src/testing/temp-dir.js';
import { harnessBound } from '../support/bounds.js';
import { serverFixture } from '../support/server-fixture.js';
import type { ReadmeBlock } from './readme-blocks.js';
import { REPO, firstUnmatched, readReadme, readmeBlocks, run, scratchRoot, statedOutput, usesUndeclaredClient } from './readme-blocks.js';

/*
 * Every ```ts and ```js block of README.md runs as a user would paste it into a file of its own:
 * its text alone, nothing added. TypeScript runs through tsx (after one strict type-check of them
 * all against the built declarations), JavaScript with plain node, so a JavaScript example that
 * needs TypeScript (`await using`) fails here. A block connects its own client to
 * `$ZOOKEEPER_CONNECT`, which names a chroot of its own, so blocks cannot see each other's
 * nodes. It must exit 0 with nothing on stderr and print what its `// prints:` comments say.
 * Blocks fenced as ```ts sketch are listed as skipped.
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
    for (const block of blocks) writeFileSync(join(dir, fileOf(block)), `${block.code}\n`);
  });

  after(async () => {
    if (dir) await removeTempDir(dir);
  });

  test('the README has runnable blocks of both languages', () => {
    const runnable = blocks.filter((b) => !b.sketch);
    assert.ok(runnable.some((b) => b.lang === 'ts') && runnable.some((b) => b.lang === 'js'), 'expected ```ts and ```js blocks');
  });

  test('every runnable block makes its own client (none relies on one from the prose or another block)', () => {
    const relying = blocks.filter((b) => !b.sketch && usesUndeclaredClient(b)).map((b) => `README.md:${b.line}`);
    const connect = "import { ZooKeeperClient } from 'zklock'; await using client = await ZooKeeperClient.connect(process.env.ZOOKEEPER_CONNECT ?? '127.0.0.1:2181');";
    assert.deepEqual(relying, [], `these blocks use \`client\` without making it; begin them with:\n${connect}\n(in JavaScript: const client = …, closed in finally)`);
  });

  test('its TypeScript blocks type-check (strict, against dist/*.d.ts, no "types" listed)', async () => {
    const files = blocks.filter((b) => b.lang === 'ts' && !b.sketch).map(fileOf);
    const compilerOptions = { strict: true, target: 'ES2022', module: 'nodenext', moduleResolution: 'nodenext', types: [], noEmit: true };
    writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions, files }));
    const tsc = await run(process.execPath, [join(REPO, 'node_modules/typescript/bin/tsc'), '-p', dir], { cwd: dir, ms: BLOCK_MS });
    // A file's line L is the README's line L + its fence line; the message names the file (readme-L<fence>).
    assert.equal(tsc.code, 0, tsc.output);
  });

  for (const block of blocks) {
    const skip = block.sketch ? `README.md:${block.line} is a sketch (\`\`\`${block.lang} sketch), not run` : false;
    test(`README.md:${block.line} (${block.lang}) runs`, { skip }, async () => {
      const chroot = `/readme/L${block.line}`;
      await zk.client.ensurePath(chroot);
      const args = block.lang === 'ts' ? ['--import', 'tsx', fileOf(block)] : [fileOf(block)];
      const result = await run(process.execPath, args, { cwd: dir, env: { ZOOKEEPER_CONNECT: `${zk.server.connectString}${chroot}` }, ms: BLOCK_MS });
      const where = `README.md:${block.line} (its line N is ${fileOf(block)}:N, README.md:${block.line}+N)`;
      assert.equal(result.code, 0, `${where} failed:\n${result.output}`);
      assert.equal(result.stderr, '', `${where} wrote to stderr`);
      const missing = firstUnmatched(result.stdout, statedOutput(block));
      assert.equal(missing, undefined, `${where} did not print a line matching ${String(missing)} ("// prints:"), it printed:\n${result.stdout}`);
    });
  }
});

describe('what the README test reads', () => {
  test('a fence it cannot read fails instead of being skipped', () => {
    for (const fence of ['```TS', '```tsx', '```mts', '```', '```ts continued', '- a list item:\n  ```ts']) {
      assert.throws(() => readmeBlocks(`${fence}\nconsole.log(1);\n\`\`\`\n`), /README\.md:\d+: /, fence);
    }
    assert.deepEqual(readmeBlocks('```sh\nnpm test\n```\n\n```text\nout\n```\n'), []);
    assert.deepEqual(readmeBlocks('```js sketch\nx;\n```\n').map((b) => [b.lang, b.sketch, b.code]), [['js', true, 'x;']]);
  });

  test('"// prints:" lines are matched in order, … standing for any text', () => {
    const [block] = readmeBlocks("```ts\nconsole.log(a); // prints: holding /x/…, token …\nconsole.log(b); // prints: HOLD_EXPIRED false\n```\n");
    assert.ok(block);
    const expected = statedOutput(block);
    assert.equal(firstUnmatched('holding /x/n-1, token 7\nHOLD_EXPIRED false\n', expected), undefined);
    assert.equal(firstUnmatched('HOLD_EXPIRED false\nholding /x/n-1, token 7\n', expected), expected[1], 'out of order');
    assert.equal(firstUnmatched('HOLD_EXPIRED falsehood\n', expected.slice(1)), expected[1], 'a whole line, not a part of one');
  });
});
