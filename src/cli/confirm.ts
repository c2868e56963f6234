import { createInterface } from 'node:readline/promises';
import { CliError } from './cli-error.js';
import { EXIT } from './exit-codes.js';

/**
 * Asks a yes/no question on the terminal; `--yes` skips it. Without a terminal there is nobody to
 * ask, and a destructive default would be wrong, so that is a usage error.
 */
export async function confirm(question: string, assumeYes: boolean, signal: AbortSignal): Promise<boolean> {
  if (assumeYes) return true;
  if (!process.stdin.isTTY) throw new CliError('refusing to ask for confirmation: stdin is not a terminal (pass --yes to confirm)', EXIT.USAGE);
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    const answer = await rl.question(`${question} [y/N] `, { signal });
    return /^y(es)?$/i.test(answer.trim());
  } finally {
    rl.close();
  }
}
