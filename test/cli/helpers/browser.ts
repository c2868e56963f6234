import type { Browser } from 'playwright-core';
import { chromium } from 'playwright-core';

/** Debian's Chromium (scripts/install-system-deps.sh installs it); Playwright never downloads a browser of its own here. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/**
 * Headless Chromium (Playwright gives it a fresh throwaway profile). The flags keep it off the
 * network (no updates, sync or first-run calls home: a closed machine refuses those),
 * --no-sandbox lets it run as root, as CI does, and --disable-dev-shm-usage keeps it off a
 * container's small /dev/shm (64 MB in Docker), where big pages crash the tab.
 */
export function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage'],
  });
}
