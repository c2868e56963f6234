import { connect, createServer } from 'node:net';
import type { Server } from 'node:net';
import { HarnessError, isHarnessError } from './harness-error.js';

/** Every listener and connection the harness makes is on this address. */
export const LOOPBACK = '127.0.0.1';

// Ports handed out by this process are never handed out again, so two servers started back
// to back cannot be given the same just-released port before the first JVM has bound it.
const issued = new Set<number>();

const MAX_ATTEMPTS = 20;

function listenOnEphemeralPort(): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', (error) =>
      reject(
        new HarnessError('PORT_UNAVAILABLE', `Cannot listen on ${LOOPBACK}: ${error.message}`, {}, { cause: error }),
      ),
    );
    server.listen({ host: LOOPBACK, port: 0, exclusive: true }, () => resolve(server));
  });
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => server.close(() => resolve()));
}

/**
 * Finds a currently free loopback port. It is released again before returning, so a JVM can
 * bind it; the small window in which another process could take it is covered by the callers,
 * which retry a first start on fresh ports (see `PORT_UNAVAILABLE`).
 */
export async function allocatePort(): Promise<number> {
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    const server = await listenOnEphemeralPort();
    const address = server.address();
    await closeServer(server);
    if (address !== null && typeof address !== 'string' && !issued.has(address.port)) {
      issued.add(address.port);
      return address.port;
    }
  }
  throw new HarnessError('PORT_UNAVAILABLE', `No fresh loopback port after ${MAX_ATTEMPTS} attempts`, {});
}

const PORT_CONFLICT_ATTEMPTS = 3;

/**
 * Runs `attempt` (which allocates its own ports) again when it fails with `PORT_UNAVAILABLE`:
 * another process took a port between our probe and the JVM's bind. Only a first start may do
 * this — later restarts must keep their ports.
 */
export async function retryOnPortConflict(attempt: () => Promise<void>): Promise<void> {
  for (let attempts = 1; ; attempts++) {
    try {
      await attempt();
      return;
    } catch (error) {
      if (!isHarnessError(error, 'PORT_UNAVAILABLE') || attempts >= PORT_CONFLICT_ATTEMPTS) throw error;
    }
  }
}

/** True when something accepts TCP connections on 127.0.0.1:`port` within `timeoutMs`. */
export function acceptsConnections(port: number, timeoutMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: LOOPBACK, port });
    const settle = (accepted: boolean): void => {
      clearTimeout(timer);
      socket.destroy();
      resolve(accepted);
    };
    const timer = setTimeout(() => settle(false), timeoutMs);
    socket.once('connect', () => settle(true));
    socket.once('error', () => settle(false));
  });
}
