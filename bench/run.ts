/**
 * `npm run bench [-- --quick] [-- --no-kazoo] [-- --only client|lock]`: starts a standalone
 * ZooKeeper server with the testing harness, runs the client and lock scenarios for zklock,
 * node-zookeeper-client and kazoo against it, prints a table and writes bench/results/.
 */
import os from 'node:os';
import { ZooKeeperServer } from '../src/testing/index.js';
import { clientScenarios, warmUpServer } from './client-scenarios.js';
import { parseArgs } from './config.js';
import type { Bench } from './context.js';
import { lockScenarios } from './lock-scenarios.js';
import { kazooUnavailable } from './peers/kazoo.js';
import { connectZklock } from './peers/ops-client.js';
import type { Report, Row } from './report.js';
import { renderTable, writeReport } from './report.js';

/**
 * The harness's JVM defaults are for many short test servers (C1 only, 256 MB heap). A benchmark
 * runs one server for minutes with a thousand waiters: let C2 compile the hot paths and give the
 * heap room. The harness appends user jvmArgs last, so these win.
 */
const BENCH_JVM_ARGS = ['-XX:TieredStopAtLevel=4', '-Xms256m', '-Xmx512m'];

async function main(): Promise<void> {
  const config = parseArgs(process.argv.slice(2));
  const startedAt = new Date().toISOString();
  const notes: string[] = [];
  const log = (line: string): void => console.error(line);
  let kazoo = config.kazoo;
  if (kazoo) {
    const reason = await kazooUnavailable();
    if (reason) {
      notes.push(reason);
      log(reason);
      kazoo = false;
    }
  }
  log(`starting ZooKeeper (${config.mode} run)…`);
  await using server = await ZooKeeperServer.start({ jvmArgs: BENCH_JVM_ARGS });
  const bench: Bench = {
    config,
    connectString: server.connectString,
    fourLetterWord: (word) => server.fourLetterWord(word),
    root: '/zklock-bench',
    kazoo,
    log,
  };
  const setup = await connectZklock(server.connectString);
  await setup.ensurePath(bench.root);
  await setup.close();

  log('warming the server up…');
  await warmUpServer(bench);

  const rows: Row[] = [];
  const wants = (group: string): boolean => config.only.size === 0 || config.only.has(group);
  if (wants('client')) {
    log('client scenarios…');
    rows.push(...(await clientScenarios(bench)));
  }
  if (wants('lock')) {
    log('lock scenarios…');
    rows.push(...(await lockScenarios(bench)));
  }

  notes.push(...rows.flatMap((row) => (row.note ? [row.note] : [])));
  const report: Report = {
    startedAt,
    config: { ...config, only: [...config.only] },
    environment: {
      node: process.version,
      platform: `${os.platform()} ${os.release()}`,
      cpus: os.cpus().length,
      cpuModel: os.cpus()[0]?.model,
      loadAverageAtEnd: os.loadavg(),
      zookeeper: (await server.status())?.version,
      connectString: server.connectString,
    },
    notes,
    rows,
  };
  const file = await writeReport(report);
  console.log(renderTable(rows));
  for (const note of notes) console.log(`note: ${note}`);
  console.log(`\nresults: ${file} (and bench/results/latest.json)`);
}

await main();
