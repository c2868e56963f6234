export * from './client/index.js';
export * from './recipes/index.js';
