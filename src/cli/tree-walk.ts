/**
 * What `ls` and `ui` walk when not told otherwise, one answer for both: the whole ensemble (a lock
 * anywhere is found, not only under a conventional folder), and as many znodes as the ui reads.
 */
export const DEFAULT_TREE_ROOT = '/';
export const DEFAULT_MAX_NODES = 100_000;
