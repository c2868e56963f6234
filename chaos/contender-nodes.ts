import type { ZooKeeperClient } from '../src/index.js';
import { ZooKeeperError } from '../src/index.js';

/** Every ephemeral node under `root` (the contender and lease nodes of the recipes), depth first. */
export async function ephemeralNodes(client: ZooKeeperClient, root: string): Promise<string[]> {
  const found: string[] = [];
  const visit = async (path: string): Promise<void> => {
    let listing;
    try {
      listing = await client.getChildren(path, {});
    } catch (error) {
      // Containers are reaped while we walk: a vanished node has nothing under it.
      if (error instanceof ZooKeeperError && error.code === 'NONODE') return;
      throw error;
    }
    if (listing.stat.ephemeralOwner !== 0n) found.push(path);
    for (const child of listing.children) await visit(path === '/' ? `/${child}` : `${path}/${child}`);
  };
  await visit(root);
  return found;
}
