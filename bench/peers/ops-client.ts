import { ZooKeeperClient } from '../zklock.js';

/**
 * The few operations the client rows use, promise-shaped, so one scenario body drives every Node
 * client. Our adapter returns our promises as they are (no extra hop), so it measures our client.
 */
export interface OpsClient {
  readonly name: 'zklock' | 'nzk';
  getData(path: string): Promise<unknown>;
  setData(path: string, data: Buffer): Promise<unknown>;
  create(path: string, data: Buffer, mode: 'PERSISTENT' | 'EPHEMERAL_SEQUENTIAL'): Promise<string>;
  delete(path: string): Promise<unknown>;
  getChildren(path: string): Promise<unknown>;
  close(): Promise<void>;
}

/** Session timeout for every benchmark session: long enough that a busy 2-core machine never expires one. */
export const SESSION_TIMEOUT_MS = 30_000;

export async function connectZklock(connectString: string): Promise<ZooKeeperClient> {
  return ZooKeeperClient.connect(connectString, { sessionTimeout: SESSION_TIMEOUT_MS });
}

export async function zklockOps(connectString: string): Promise<OpsClient> {
  const client = await connectZklock(connectString);
  return {
    name: 'zklock',
    getData: (path) => client.getData(path),
    setData: (path, data) => client.setData(path, data),
    create: async (path, data, mode) => (await client.create(path, data, { mode })).path,
    delete: (path) => client.delete(path),
    getChildren: (path) => client.getChildren(path),
    close: () => client.close(),
  };
}
