import { parseArgs } from 'node:util';
import { loadavg } from 'node:os';
import { ZooKeeperClient } from '../src/index.js';
import { ZooKeeperEnsemble, ZooKeeperServer } from '../src/testing/index.js';
import { DEFAULT_TIMING } from './execute.js';
import type { ViolationKind } from './execute.js';
import { explore, failureText } from './explorer.js';
import { scenarioText } from './scenario.js';

/**
 * `npm run explore -- [--minutes M] [--seed N] [--workers W] [--runs R]`: searches for a scenario
 * that breaks an invariant, against one real ZooKeeper server started here; prints the shrunk
 * scenario and the command that replays it (`--seed N --path P`). Exit code 1 on a failure.
 */

const { values } = parseArgs({
  options: {
    seed: { type: 'string' },
    path: { type: 'string' },
    minutes: { type: 'string', default: '10' },
    runs: { type: 'string' },
    workers: { type: 'string', default: '6' },
    'shrink-minutes': { type: 'string', default: '3' },
    'session-timeout': { type: 'string', default: String(DEFAULT_TIMING.sessionTimeout) },
    slack: { type: 'string', default: String(DEFAULT_TIMING.slack) },
    json: { type: 'boolean', default: false },
    ignore: { type: 'string', multiple: true },
    'keep-going': { type: 'boolean', default: false },
    shrink: { type: 'boolean', default: false },
    kind: { type: 'string' },
    repeat: { type: 'string', default: '1' },
    ensemble: { type: 'boolean', default: false },
  },
});

function int(name: string, text: string | undefined): number {
  const n = Number(text);
  if (!Number.isSafeInteger(n)) {
    console.error(`--${name} must be a whole number, got ${String(text)}`);
    process.exit(2);
  }
  return n;
}

const seed = values.seed === undefined ? Math.floor(Math.random() * 1_000_000) : int('seed', values.seed);
const timing = { sessionTimeout: int('session-timeout', values['session-timeout']), slack: int('slack', values.slack) };
// A 3-member ensemble whose links run through the harness's proxies (a follower cut from the leader), for member faults.
const ensemble = values.ensemble ? await ZooKeeperEnsemble.start({ linkProxies: true }) : undefined;
const server = ensemble ?? (await ZooKeeperServer.start());
const admin = await ZooKeeperClient.connect(server.connectString);
const extra = [
  timing.sessionTimeout !== DEFAULT_TIMING.sessionTimeout ? ` --session-timeout ${timing.sessionTimeout}` : '',
  timing.slack !== DEFAULT_TIMING.slack ? ` --slack ${timing.slack}` : '',
  ensemble ? ' --ensemble' : '',
].join('');
let code = 0;
try {
  console.log(`explore: seed ${seed}${values.path ? `, replaying ${values.path}` : ''}${ensemble ? ', a 3-member ensemble (one scenario at a time)' : `, ${values.workers} workers`}, load ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  const result = await explore({
    seed,
    ...(values.path !== undefined ? { path: values.path } : {}),
    timeLimitMs: Number(values.minutes) * 60_000,
    ...(values.runs !== undefined ? { maxScenarios: int('runs', values.runs) } : {}),
    workers: int('workers', values.workers),
    timing,
    shrinkMs: Number(values['shrink-minutes']) * 60_000,
    serverPort: ensemble ? ensemble.members[0]!.port : (server as ZooKeeperServer).port,
    ...(ensemble ? { ensemble } : {}),
    admin,
    root: `/explore/${seed}-${Date.now()}`,
    progress: (text) => console.log(text),
    ignore: (values.ignore ?? []).map((r) => new RegExp(r)),
    keepGoing: values['keep-going'],
    shrinkReplay: values.shrink,
    repeat: int('repeat', values.repeat),
    ...(values.kind !== undefined ? { onlyKind: values.kind as ViolationKind } : {}),
  });
  const rate = result.scenarios / (result.elapsedMs / 60_000);
  console.log(`${result.scenarios} scenarios in ${(result.elapsedMs / 1000).toFixed(1)} s (${rate.toFixed(0)} a minute), load ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  if (values.json) console.log(JSON.stringify({ seed, scenarios: result.scenarios, elapsedMs: result.elapsedMs, failure: result.failure ?? null, sightings: result.sightings }));
  for (const s of result.sightings) {
    console.log(`\n${s.signature}: after ${s.foundAfter} scenarios, ${(s.foundAtMs / 1000).toFixed(1)} s\n  ${s.violation.text}\n${scenarioText(s.scenario)}\n  replay: npm run explore -- --seed ${s.seed} --path ${s.path}${extra} (add --shrink to shrink it)`);
  }
  if (result.sightings.length > 0) code = 1;
  if (result.failure) {
    console.log(failureText(result.failure, extra));
    code = 1;
  } else if (result.sightings.length === 0) {
    console.log(values.path ? 'the scenario passed this time' : 'no invariant broken');
  }
} finally {
  await admin.close();
  await (ensemble ? ensemble.close() : server.stop());
}
process.exit(code);
