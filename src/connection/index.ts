export * from './connect-string.js';
export * from './session.js';
export type { RequestSpec } from './packet.js';
export type { TlsOptions } from './transport.js';
export type { SaslOptions } from './sasl.js';
export { checkSaslOptions } from './sasl.js';
