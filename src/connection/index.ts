export * from './hosts/connect-string.js';
export * from './hosts/ip.js';
export * from './session/session.js';
export type { RequestSpec } from './session/packet.js';
export type { TlsOptions } from './socket/transport.js';
export type { SaslOptions } from './session/sasl.js';
export { checkSaslOptions } from './session/sasl.js';
