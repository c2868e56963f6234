#!/usr/bin/env node
// tsc emits only what it compiles: the page `zklock ui` serves (HTML, CSS, browser JS) is copied
// beside the compiled server, where it looks for it (dist/cli/ui/assets).
import { cpSync } from 'node:fs';

cpSync(new URL('../src/cli/ui/assets/', import.meta.url), new URL('../dist/cli/ui/assets/', import.meta.url), { recursive: true });
