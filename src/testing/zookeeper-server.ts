import { allocatePort, retryOnPortConflict } from './loopback-ports.js';
import { removeTempDir } from './temp-dir.js';
import { HarnessError } from './harness-error.js';
import type { X509Client } from './tls-keystore.js';
import { createWorkspace } from './workspace.js';
import type { Workspace } from './workspace.js';
import { dataDirIn, renderConfig } from './zookeeper-config.js';
import { validateOptions } from './zookeeper-options.js';
import type { Timing, ZooKeeperOptions } from './zookeeper-options.js';
import { ZooKeeperProcess } from './zookeeper-process.js';
import type { LaunchPlan } from './zookeeper-process.js';

/** Options for {@link ZooKeeperServer}. */
export interface ZooKeeperServerOptions extends ZooKeeperOptions {
  /**
   * The client port on 127.0.0.1 (`zklock server --port 2181`, for tools that only know a fixed
   * address); default a free one, which tests should keep. A port in use fails the start (not
   * retried on another port).
   */
  readonly port?: number;
}

/**
 * A real standalone ZooKeeper server (a JVM running QuorumPeerMain) on free 127.0.0.1 ports,
 * with its own temporary directory for config, data and log. Close it (or `await using` it)
 * to stop the JVM and delete the directory; if the test process dies first, a watchdog does.
 *
 * @example
 * ```ts
 * await using server = await ZooKeeperServer.start();
 * const client = connect(server.connectString);
 * ```
 */
export class ZooKeeperServer extends ZooKeeperProcess {
  readonly #options: ZooKeeperServerOptions;
  readonly #timing: Timing;
  #workspace: Workspace | undefined;
  #plan: LaunchPlan | undefined;
  #closed = false;

  /** Validates the options (`INVALID_OPTIONS`); nothing else happens until {@link start}. */
  constructor(options: ZooKeeperServerOptions = {}) {
    super('ZooKeeper server');
    this.#options = options;
    this.#timing = validateOptions(options);
    if (options.port !== undefined && !(Number.isInteger(options.port) && options.port >= 1 && options.port <= 65535)) {
      throw new HarnessError('INVALID_OPTIONS', `port must be an integer from 1 to 65535, got ${options.port}`, { option: 'port', value: options.port });
    }
  }

  /** Creates and starts a server; on failure nothing is left behind. */
  static async start(options: ZooKeeperServerOptions = {}): Promise<ZooKeeperServer> {
    // Inside the async function, so invalid options reject rather than throw.
    const server = new ZooKeeperServer(options);
    try {
      await server.start();
      return server;
    } catch (error) {
      await server.close();
      throw error;
    }
  }

  protected override launchPlan(): LaunchPlan | undefined {
    return this.#plan;
  }

  protected override isClosed(): boolean {
    return this.#closed;
  }

  /**
   * Starts the server and waits until it serves. The first start locates ZooKeeper, creates the
   * temporary directory (and TLS key store) and picks ports, retrying on fresh ports if one is
   * taken meanwhile; later starts reuse the same ports and data.
   */
  override async start(): Promise<void> {
    if (this.#plan !== undefined || this.state !== 'stopped') {
      await super.start();
      return;
    }
    const workspace = (this.#workspace ??= await createWorkspace(this.#options, this.#timing, 'server'));
    const launch = async (): Promise<void> => {
      this.#plan = await planLaunch(this.#options, workspace);
      try {
        await super.start();
      } catch (error) {
        this.#plan = undefined;
        throw error;
      }
    };
    // A port the caller chose is the same on every attempt: a conflict there is the answer, not a race to retry.
    await (this.#options.port === undefined ? retryOnPortConflict(launch) : launch());
  }

  /**
   * The self-signed certificate (PEM) of the TLS port — pass it as `ca` to `tls.connect`.
   * Undefined unless started with `tls: true`.
   */
  get tlsCertificatePem(): string | undefined {
    return this.#workspace?.tls?.certificatePem;
  }

  /** The x509 client identity `name` of the `x509Clients` option (INVALID_OPTIONS for another name). */
  x509Client(name: string): X509Client {
    const client = this.#workspace?.tls?.clients.get(name);
    if (client === undefined) throw new HarnessError('INVALID_OPTIONS', `no x509 client identity "${name}": list it in x509Clients`, { option: 'x509Clients', value: name });
    return client;
  }

  /** Stops the JVM (gracefully) and deletes the temporary directory. Idempotent. */
  async close(): Promise<void> {
    if (this.#closed) return;
    await this.stop();
    this.#closed = true;
    if (this.#workspace !== undefined) await removeTempDir(this.#workspace.dir);
  }

  /** Same as {@link close}, for `await using`. */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }
}

async function planLaunch(options: ZooKeeperServerOptions, workspace: Workspace): Promise<LaunchPlan> {
  const clientPort = options.port ?? (await allocatePort());
  const tls = workspace.tls === undefined ? undefined : { securePort: await allocatePort(), material: workspace.tls };
  const config = renderConfig({ options, timing: workspace.timing, dataDir: dataDirIn(workspace.dir), clientPort, tls });
  return { workspace, dir: workspace.dir, files: { 'zoo.cfg': config }, clientPort, securePort: tls?.securePort };
}
