#!/usr/bin/env node
import { readFileSync } from 'node:fs';
import { Command, CommanderError } from 'commander';
import { CliError, exitCodeOf, messageOf } from './cli-error.js';
import { demoCommand } from './commands/demo.js';
import { execCommand } from './commands/exec.js';
import { lsCommand } from './commands/ls.js';
import { releaseCommand } from './commands/release.js';
import { revokeCommand } from './commands/revoke.js';
import { serverCommand } from './commands/server.js';
import { statusCommand } from './commands/status.js';
import { uiCommand } from './commands/ui.js';
import { demoWorkerCommand } from './demo/worker.js';
import { EXIT, exitCodesHelp } from './exit-codes.js';

const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };

const EXAMPLES = `
Examples:
  zklock exec /locks/backup -- ./backup.sh     run a command holding a lock
  zklock status /locks/backup                  who holds it, who waits
  zklock ls /locks                             every lock under /locks
  zklock ui --root /locks                      every lock under /locks, live in the browser
  zklock revoke /locks/backup                  ask its holder to let go (Curator's protocol)
  zklock server --ensemble 3                   a local ensemble for development
  zklock demo                                  the self-checking demo

Connection options (--connect, default $ZOOKEEPER_CONNECT or 127.0.0.1:2181; --auth; --tls…)
are given after the command name; see \`zklock <command> --help\`.
`;

function program(): Command {
  const root = new Command('zklock')
    .description('distributed locks on Apache ZooKeeper')
    .version(pkg.version, '-V, --version', 'print the version')
    .enablePositionalOptions()
    .showHelpAfterError('(run with --help for usage)')
    .addHelpText('after', `${EXAMPLES}\n${exitCodesHelp('all')}`);
  for (const command of [execCommand(), statusCommand(), lsCommand(), uiCommand(), revokeCommand(), releaseCommand(), serverCommand(), demoCommand()]) root.addCommand(command);
  root.addCommand(demoWorkerCommand(), { hidden: true });
  // Commander exits by itself on usage errors (code 1); route them through one place so usage errors exit 2 as documented.
  const exitOverride = (error: CommanderError): never => {
    throw error;
  };
  root.exitOverride(exitOverride);
  for (const command of root.commands) command.exitOverride(exitOverride).showHelpAfterError('(run with --help for usage)');
  return root;
}

// `zklock status --json | head` closes our stdout early: that is the reader's choice, not a crash.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') process.exit(process.exitCode ?? EXIT.OK);
  throw error;
});

try {
  await program().parseAsync(process.argv);
} catch (error) {
  if (error instanceof CommanderError) {
    // Help and version are "errors" only to commander; its message is already printed.
    const benign = error.code === 'commander.helpDisplayed' || error.code === 'commander.version' || error.code === 'commander.help';
    process.exitCode = benign ? EXIT.OK : EXIT.USAGE;
  } else {
    process.stderr.write(`zklock: ${error instanceof CliError ? error.message : messageOf(error)}\n`);
    process.exitCode = exitCodeOf(error);
  }
}
// Everything we open is closed by now; this unref'd timer only fires if a stray handle would keep the CLI alive.
setTimeout(() => process.exit(), 5000).unref();
