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

const RUNNABLE: Readonly<Record<string, 'ts' | 'js'>> = { ts: 'ts', js: 'js' };
/** Fences that hold no code to run: commands, output and configuration (the first screen's tsconfig.json, which consumer.test.ts compiles with). */
const NOT_RUN: ReadonlySet<string> = new Set(['sh', 'text', 'json']);

/**
 * The TypeScript and JavaScript blocks of a Markdown text, in order. Any other fence must say it
 * is not code to run (```sh, ```text): a fence this cannot read (```TS, ```tsx, ```mts, no
 * language, an indented fence inside a list item, a word after the language other than
 * `sketch`) would otherwise be skipped silently, an example nobody runs.
 */
export function readmeBlocks(markdown: string): ReadmeBlock[] {
  const lines = markdown.split('\n');
  const blocks: ReadmeBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const fence = /^(\s*)(```|~~~)\s*(\S*)\s*(.*)$/.exec(lines[i] ?? '');
    if (!fence) continue;
    const [, indent = '', mark = '', lang = '', rest = ''] = fence;
    const where = `README.md:${i + 1}`;
    if (indent !== '') throw new Error(`${where}: an indented code fence; put examples at the top level, fenced as \`\`\`ts, \`\`\`js or \`\`\`sh`);
    const end = lines.findIndex((l, j) => j > i && l.startsWith(mark));
    if (end < 0) throw new Error(`${where}: a code block that is never closed`);
    const runnable = RUNNABLE[lang];
    if (!runnable && !NOT_RUN.has(lang)) throw new Error(`${where}: a \`\`\`${lang} fence; use \`\`\`ts or \`\`\`js (run by test/readme), or \`\`\`sh, \`\`\`text or \`\`\`json (not run)`);
    if (rest !== '' && !(runnable && rest === 'sketch')) throw new Error(`${where}: "${rest}" after \`\`\`${lang}; only \`\`\`ts sketch or \`\`\`js sketch are known`);
    if (runnable) blocks.push({ line: i + 1, lang: runnable, sketch: rest === 'sketch', code: lines.slice(i + 1, end).join('\n') });
    i = end;
  }
  return blocks;
}

export function readReadme(): ReadmeBlock[] {
  return readmeBlocks(readFileSync(join(REPO, 'README.md'), 'utf8'));
}

/** The README's first ```json block: the tsconfig.json its first screen tells a newcomer to write. */
export function readmeTsconfig(): string {
  const fence = /^```json\n([\s\S]*?)\n```$/m.exec(readFileSync(join(REPO, 'README.md'), 'utf8'));
  if (!fence) throw new Error('README.md has no ```json block (the first screen\'s tsconfig.json)');
  return fence[1] ?? '';
}

/** Whether a block uses a `client` it does not make itself: pasted alone, it would not compile or run. */
export function usesUndeclaredClient(block: ReadmeBlock): boolean {
  const code = block.code.replace(/\/\/.*$/gm, ''); // "a client of this member only" in a comment uses nothing
  return /\bclient\b/.test(code) && !/\b(?:const|let|var|using)\s+client\b/.test(code);
}

/**
 * What a block says it prints: the text after `// prints:` on its lines, in order, `…` standing
 * for any text (a node name, a token). Each must be a line of its standard output, in that order.
 */
export function statedOutput(block: ReadmeBlock): RegExp[] {
  const escape = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return [...block.code.matchAll(/\/\/ prints: (.*)$/gm)].map((m) => new RegExp(`^${(m[1] ?? '').trim().split('…').map(escape).join('.+')}$`));
}

/** The lines of `stdout` that match `expected` in order; the first that matches nothing, or undefined when all do. */
export function firstUnmatched(stdout: string, expected: readonly RegExp[]): RegExp | undefined {
  const lines = stdout.split('\n');
  let at = 0;
  for (const pattern of expected) {
    const found = lines.findIndex((l, i) => i >= at && pattern.test(l));
    if (found < 0) return pattern;
    at = found + 1;
  }
  return undefined;
}

export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
  /** Both streams interleaved, as the user would see them. */
  output: string;
}

/** Runs a command to its end (killed after `ms`). */
export async function run(command: string, args: readonly string[], options: { cwd: string; env?: NodeJS.ProcessEnv; ms: number }): Promise<Run> {
  const child = spawn(command, args, { cwd: options.cwd, env: { ...process.env, ...options.env }, stdio: ['ignore', 'pipe', 'pipe'] });
  const result: Run = { code: null, stdout: '', stderr: '', output: '' };
  child.stdout.on('data', (chunk: Buffer) => {
    result.stdout += chunk.toString();
    result.output += chunk.toString();
  });
  child.stderr.on('data', (chunk: Buffer) => {
    result.stderr += chunk.toString();
    result.output += chunk.toString();
  });
  const timer = setTimeout(() => {
    result.output += `\n[killed after ${options.ms} ms]`;
    child.kill('SIGKILL');
  }, options.ms);
  try {
    [result.code] = (await once(child, 'close')) as [number | null];
    return result;
  } finally {
    clearTimeout(timer);
  }
}
