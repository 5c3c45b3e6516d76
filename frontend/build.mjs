// Build the served assets: our sources and htmx from node_modules, into ../static.
// Nothing third-party is committed; `npm ci` brings htmx, this script places it.
import { cpSync, mkdirSync, readdirSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const out = join(here, "..", "static");

rmSync(out, { recursive: true, force: true });
mkdirSync(join(out, "vendor"), { recursive: true });
cpSync(join(here, "node_modules", "htmx.org", "dist", "htmx.min.js"), join(out, "vendor", "htmx.min.js"));
for (const name of readdirSync(join(here, "src"))) {
  cpSync(join(here, "src", name), join(out, name));
}
console.log(`built ${readdirSync(out).length} entries into ${out}`);
