// Our public types use Node's (Buffer, AbortSignal, EventEmitter, tls options): the reference makes
// the declarations stand on their own in a project whose tsconfig does not list "node" in "types".
/// <reference types="node" preserve="true" />
export * from './client/index.js';
export * from './recipes/index.js';
