#!/usr/bin/env node
import { readFileSync } from 'node:fs';
import { Mutex, ZooKeeperClient } from '../index.js';
import { ZooKeeperServer } from '../testing/index.js';

const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };

const HELP = `zklock ${pkg.version}: distributed locks on Apache ZooKeeper

Usage:
  zklock demo         start a local ZooKeeper, acquire and release a lock
  zklock --version    print the version
  zklock --help       print this help
`;

async function demo(): Promise<void> {
  await using server = await ZooKeeperServer.start();
  console.log(`local ZooKeeper at ${server.connectString}`);
  await using client = await ZooKeeperClient.connect(server.connectString);
  const mutex = new Mutex(client, '/zklock-demo/lock');
  await mutex.runExclusive((lease) => {
    console.log(`acquired ${lease.node} (fencing token ${lease.fencingToken})`);
  });
  const left = await client.getChildren('/zklock-demo/lock');
  console.log(`released; contenders left: ${left.children.length}`);
  if (left.children.length !== 0) process.exitCode = 1;
}

const [command] = process.argv.slice(2);
switch (command) {
  case '--version':
  case '-v':
    console.log(pkg.version);
    break;
  case 'demo':
    await demo();
    break;
  case undefined:
  case '--help':
  case '-h':
    console.log(HELP);
    break;
  default:
    console.error(`zklock: unknown command "${command}"\n\n${HELP}`);
    process.exitCode = 2;
}
