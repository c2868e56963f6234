// The example imports 'zklock' as an application would. Inside the repository that is the
// repository itself (build it first: `npm run build` at the root), linked here after each
// install; an application outside it installs zklock from the registry instead.
import { existsSync, symlinkSync } from 'node:fs';

const link = new URL('./node_modules/zklock', import.meta.url);
if (!existsSync(link)) symlinkSync('../../..', link, 'dir');
