import { createRequire } from 'node:module';
import type { OpsClient } from './ops-client.js';
import { SESSION_TIMEOUT_MS } from './ops-client.js';

type Callback<T> = (error: Error | null, result: T) => void;

/** The part of node-zookeeper-client's (untyped, CommonJS) API the benchmark calls. */
export interface NzkClient {
  connect(): void;
  close(): void;
  once(event: 'connected', listener: () => void): void;
  getData(path: string, callback: Callback<Buffer>): void;
  setData(path: string, data: Buffer, version: number, callback: Callback<unknown>): void;
  create(path: string, data: Buffer, mode: number, callback: Callback<string>): void;
  remove(path: string, version: number, callback: Callback<void>): void;
  getChildren(path: string, callback: Callback<string[]>): void;
  exists(path: string, watcher: () => void, callback: Callback<unknown>): void;
  mkdirp(path: string, callback: Callback<string>): void;
}

interface NzkModule {
  createClient(connectString: string, options: { sessionTimeout: number; spinDelay: number; retries: number }): NzkClient;
  CreateMode: { PERSISTENT: number; EPHEMERAL_SEQUENTIAL: number };
}

export const nzk = createRequire(import.meta.url)('node-zookeeper-client') as NzkModule;

/** Adapts a callback call to a promise, as any application using this client with async/await does. */
export function call<T>(start: (callback: Callback<T>) => void): Promise<T> {
  return new Promise((resolve, reject) => start((error, result) => (error ? reject(error) : resolve(result))));
}

export async function nzkConnect(connectString: string): Promise<NzkClient> {
  const client = nzk.createClient(connectString, { sessionTimeout: SESSION_TIMEOUT_MS, spinDelay: 100, retries: 0 });
  await new Promise<void>((resolve) => {
    client.once('connected', resolve);
    client.connect();
  });
  return client;
}

export async function nzkOps(connectString: string): Promise<OpsClient> {
  const client = await nzkConnect(connectString);
  return {
    name: 'nzk',
    getData: (path) => call((cb) => client.getData(path, cb)),
    setData: (path, data) => call((cb) => client.setData(path, data, -1, cb)),
    create: (path, data, mode) => call((cb) => client.create(path, data, nzk.CreateMode[mode], cb)),
    delete: (path) => call((cb) => client.remove(path, -1, cb)),
    getChildren: (path) => call((cb) => client.getChildren(path, cb)),
    // close() takes no callback; the session ends once the server reads the close request.
    close: () => Promise.resolve(client.close()),
  };
}
