import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root: README.md, package.json and the built package (dist/) are here. */
export const REPO = fileURLToPath(new URL('../../', import.meta.url));

/**
 * Where runnable copies of README blocks go: inside the repository, so that `import … from
 * 'zklock'` resolves to this package by its own name (Node's self-reference through the
 * `exports` of package.json), exactly as in a project that installed it. Git and lint ignore it.
 */
export function scratchRoot(): string {
  const dir = join(REPO, '.zklock-tmp');
  mkdirSync(dir, { recursive: true });
  return dir;
}

export interface ReadmeBlock {
  /** The line of its opening fence in README.md (1-based). */
  line: number;
  lang: 'ts' | 'js';
  /** Fenced as ```ts sketch or ```js sketch: shows a shape, is not meant to run as it is. */
  sketch: boolean;
  code: string;
}

const LANGS: Readonly<Record<string, 'ts' | 'js'>> = { ts: 'ts', typescript: 'ts', js: 'js', javascript: 'js' };

/** The TypeScript and JavaScript blocks of a Markdown text, in order; other blocks (sh, bash, …) are not code to run. */
export function readmeBlocks(markdown: string): ReadmeBlock[] {
  const lines = markdown.split('\n');
  const blocks: ReadmeBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\S*)\s*(.*)$/.exec(lines[i] ?? '');
    if (!open) continue;
    const end = lines.findIndex((l, j) => j > i && l.startsWith('```'));
    if (end < 0) throw new Error(`README.md:${i + 1}: a code block that is never closed`);
    const lang = LANGS[open[1] ?? ''];
    if (lang) blocks.push({ line: i + 1, lang, sketch: /\bsketch\b/.test(open[2] ?? ''), code: lines.slice(i + 1, end).join('\n') });
    i = end;
  }
  return blocks;
}

export function readReadme(): ReadmeBlock[] {
  return readmeBlocks(readFileSync(join(REPO, 'README.md'), 'utf8'));
}

/** Whether a block uses the `client` the README's prose speaks of without making one itself. */
export function needsClient(block: ReadmeBlock): boolean {
  return /\bclient\b/.test(block.code) && !/\b(?:const|let|var|using)\s+client\b/.test(block.code);
}

/**
 * The block as a module file: the block's text unchanged, after a one-line prelude that connects
 * `client` (to `$ZOOKEEPER_CONNECT`) when the block needs one. In TypeScript the prelude holds it
 * with `await using`, so it closes after the block's own `await using` leases are released; in
 * JavaScript a last line closes it. The prelude is one line: the block's line N is the file's N + 1.
 */
export function moduleText(block: ReadmeBlock): string {
  if (!needsClient(block)) return `\n${block.code}\n`;
  const connect = "import { ZooKeeperClient as ReadmeClient$ } from 'zklock'; %s client = await ReadmeClient$.connect(process.env.ZOOKEEPER_CONNECT ?? '');";
  if (block.lang === 'ts') return `${connect.replace('%s', 'await using')}\n${block.code}\n`;
  return `${connect.replace('%s', 'const')}\n${block.code}\nawait client.close();\n`;
}

export interface Run {
  code: number | null;
  output: string;
}

/** Runs a command to its end (killed after `ms`), with stdout and stderr interleaved as the user would see them. */
export async function run(command: string, args: readonly string[], options: { cwd: string; env?: NodeJS.ProcessEnv; ms: number }): Promise<Run> {
  const child = spawn(command, args, { cwd: options.cwd, env: { ...process.env, ...options.env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const timer = setTimeout(() => {
    output += `\n[killed after ${options.ms} ms]`;
    child.kill('SIGKILL');
  }, options.ms);
  try {
    const [code] = (await once(child, 'close')) as [number | null];
    return { code, output };
  } finally {
    clearTimeout(timer);
  }
}
