/**
 * `npm run bench [-- --quick] [-- --no-kazoo] [-- --no-curator] [-- --no-fsync] [-- --only client|lock|semaphore|overload|memory|longqueue|profile|tracing] [-- --long-queue N,…] [-- --baseline DIR]`:
 * starts a standalone ZooKeeper server with the testing harness, runs the client and lock
 * scenarios for zklock, node-zookeeper-client, kazoo and (lock rows) Curator against it, zklock's overload
 * and memory scenarios, and the long queues of zklock, Curator and kazoo, prints a table and writes bench/results/.
 */
import { mkdir, statfs } from 'node:fs/promises';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import type { ZooKeeperServerOptions } from '../src/testing/index.js';
import { ZooKeeperServer } from '../src/testing/index.js';
import { SERVER_PID_ENV } from './server-traffic.js';
import { clientScenarios, warmUpServer } from './client-scenarios.js';
import { parseArgs } from './config.js';
import type { Bench } from './context.js';
import type { BenchConfig } from './config.js';
import { frameDecoderRows } from './frame-decoder.js';
import { lockScenarios, semaphoreScenario } from './lock-scenarios.js';
import { longQueueScenarios } from './long-queue.js';
import { leftOut } from './measure.js';
import { memoryScenarios } from './memory.js';
import { overloadScenarios } from './overload.js';
import { profileScenarios } from './profile.js';
import { tracingScenarios } from './tracing.js';
import { curatorUnavailable } from './peers/curator.js';
import { kazooUnavailable } from './peers/kazoo.js';
import { connectZklock } from './peers/ops-client.js';
import type { Report, Row } from './report.js';
import { renderTable, writeReport } from './report.js';

/**
 * The server as a packaged install runs it. Debian's zoo.cfg says tickTime=2000 and its
 * JAVA_OPTS is empty, so the JVM chooses: G1 on a machine of two or more cores and 2 GB, both
 * JIT tiers, an initial heap of 1/64 of the memory and a maximum of 1/4. The harness's defaults
 * are for many short test servers (serial GC, C1 only, 256 MB); it appends user jvmArgs last,
 * so these undo them (the serial collector explicitly: the JVM refuses two).
 */
const PACKAGED_TICK_MS = 2000;

function packagedJvmArgs(): string[] {
  const mb = Math.floor(os.totalmem() / 2 ** 20);
  return ['-XX:-UseSerialGC', '-XX:+UseG1GC', '-XX:TieredStopAtLevel=4', `-Xms${Math.floor(mb / 64)}m`, `-Xmx${Math.floor(mb / 4)}m`];
}

/** statfs type of tmpfs: memory, where an fsync costs nothing. */
const TMPFS_MAGIC = 0x01021994;

/**
 * The server as in production by default: every commit is fsynced (`forceSync=yes`, where the
 * harness's test default skips it) into a data directory on disk, under bench/results/ rather
 * than the temp dir, which may be tmpfs. `--no-fsync` gives the test setting. Returns the
 * server options and a note saying which it is.
 */
async function serverSettings(config: BenchConfig): Promise<{ options: ZooKeeperServerOptions; note: string }> {
  const packaged = { tickTime: PACKAGED_TICK_MS, jvmArgs: packagedJvmArgs() };
  const setup = `tickTime=${packaged.tickTime}, JVM ${packaged.jvmArgs.join(' ')} (the JVM's own defaults on this machine, as Debian's empty JAVA_OPTS leaves them)`;
  if (!config.fsync) return { options: packaged, note: `server: ${setup}, forceSync=no (--no-fsync), dataDir under ${os.tmpdir()}` };
  const dir = fileURLToPath(new URL('./results/', import.meta.url));
  await mkdir(dir, { recursive: true });
  const onTmpfs = (await statfs(dir)).type === TMPFS_MAGIC;
  return {
    options: { ...packaged, config: { forceSync: 'yes' }, tempDir: dir },
    note: `server: ${setup}, forceSync=yes, dataDir under ${dir}${onTmpfs ? ' — on tmpfs, so fsync costs nothing here: not a production measurement' : ' (on disk)'}`,
  };
}

async function main(): Promise<void> {
  const config = parseArgs(process.argv.slice(2));
  const startedAt = new Date().toISOString();
  const notes: string[] = [];
  const log = (line: string): void => console.error(line);
  const available = async (wanted: boolean, unavailable: () => Promise<string | undefined>): Promise<boolean> => {
    const reason = wanted ? await unavailable() : undefined;
    if (reason) {
      notes.push(reason);
      log(reason);
    }
    return wanted && reason === undefined;
  };
  const kazoo = await available(config.kazoo, kazooUnavailable);
  const curator = await available(config.curator, curatorUnavailable);
  const settings = await serverSettings(config);
  notes.push(settings.note);
  log(`starting ZooKeeper (${config.mode} run; ${settings.note})…`);
  await using server = await ZooKeeperServer.start(settings.options);
  // The peers' processes inherit it and read the server's CPU time beside each mntr of theirs.
  if (server.pid !== undefined) process.env[SERVER_PID_ENV] = String(server.pid);
  const bench: Bench = {
    config,
    connectString: server.connectString,
    fourLetterWord: (word) => server.fourLetterWord(word),
    serverPid: server.pid,
    root: '/zklock-bench',
    kazoo,
    curator,
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
  } else if (config.only.has('semaphore')) {
    log('semaphore scenario…');
    rows.push(...(await semaphoreScenario(bench)));
  }
  if (wants('overload')) {
    log('overload scenarios…');
    rows.push(...(await overloadScenarios(bench)));
    // The decoder's rows need no server: how long a large reply takes to assemble from its chunks.
    rows.push(...frameDecoderRows(config.rounds));
  }
  if (wants('profile')) {
    log('profile…');
    rows.push(...(await profileScenarios(bench, fileURLToPath(new URL('./results', import.meta.url)))));
  }
  if (wants('tracing')) {
    log('tracing overhead…');
    rows.push(...(await tracingScenarios(bench)));
  }
  if (wants('memory')) {
    log('memory scenarios…');
    rows.push(...(await memoryScenarios(bench)));
  }
  if (wants('longqueue')) {
    log('long queues…');
    rows.push(...(await longQueueScenarios(bench)));
  }

  // A note several rows share (how they were measured) is printed once.
  notes.push(...new Set(rows.flatMap((row) => (row.note ? [row.note] : []))));
  notes.push(...leftOut.map((why) => `left out of a row after its run failed: ${why}`));
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
