// Runs a few locks against a ZooKeeper ensemble and prints what OpenTelemetry makes of them:
// `node index.mjs [connect string]` (default 127.0.0.1:2181, e.g. `zklock server`'s).
import { ConsoleSpanExporter, BasicTracerProvider, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { ConsoleMetricExporter, MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import { Mutex, ZooKeeperClient } from 'zklock';
import { instrumentZklock } from './instrument.mjs';

const connectString = process.argv[2] ?? '127.0.0.1:2181';
const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(new ConsoleSpanExporter())] });
// Exported once, at shutdown: the demo is shorter than any sensible interval.
const metricReader = new PeriodicExportingMetricReader({ exporter: new ConsoleMetricExporter(), exportIntervalMillis: 60_000 });
const meterProvider = new MeterProvider({ readers: [metricReader] });
const uninstrument = instrumentZklock(tracerProvider.getTracer('zklock-example'), meterProvider.getMeter('zklock-example'));

const [alice, bob] = await Promise.all([ZooKeeperClient.connect(connectString), ZooKeeperClient.connect(connectString)]);
try {
  const path = `/zklock-example-otel-${process.pid}`;
  // Alice holds; Bob queues behind her and waits until she releases.
  const held = await new Mutex(alice, path).acquire();
  const waiting = new Mutex(bob, path).acquire({ timeout: 10_000 });
  await new Promise((resolve) => setTimeout(resolve, 250));
  await held.release();
  const lease = await waiting;
  // Someone deletes Bob's node (an operator, `zklock release --force`): his lease learns it is lost.
  await alice.delete(lease.node);
  if (!lease.signal.aborted) await new Promise((resolve) => lease.signal.addEventListener('abort', resolve, { once: true }));
  await lease.release();
  // A timeout: Bob gives up after 200 ms behind Alice.
  const again = await new Mutex(alice, path).acquire();
  await new Mutex(bob, path).acquire({ timeout: 200 }).catch((error) => console.log(`bob: ${error.code}`));
  // A tryAcquire that finds the lock taken: no error, a null lease.
  console.log(`bob's try: ${await new Mutex(bob, path).tryAcquire()}`);
  await again.release();
  await alice.delete(path).catch(() => undefined);
} finally {
  await Promise.all([alice.close(), bob.close()]);
  uninstrument();
  await tracerProvider.shutdown();
  await meterProvider.shutdown();
}
