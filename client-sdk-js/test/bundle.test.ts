import { build } from "esbuild";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterAll, describe, expect, it } from "vitest";

// The package as a consumer's bundler sees it: installed under node_modules/@jitzoo/client (a link
// to this folder, built by `npm test` before the tests run), imported by its name.
const PACKAGE = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const app = mkdtempSync(join(tmpdir(), "jitzoo-app-"));
mkdirSync(join(app, "node_modules", "@jitzoo"), { recursive: true });
symlinkSync(PACKAGE, join(app, "node_modules", "@jitzoo", "client"), "dir");
writeFileSync(join(app, "main.js"), 'import { createClient, loadModel } from "@jitzoo/client";\nglobalThis.jitzoo = { createClient, loadModel };\n');
afterAll(() => rmSync(app, { recursive: true, force: true }));

async function bundle(platform: "browser" | "node") {
  const result = await build({
    entryPoints: [join(app, "main.js")], bundle: true, format: "esm", platform, write: false, metafile: true,
    logLevel: "silent", absWorkingDir: app,
  });
  return Object.keys(result.metafile.inputs);
}

const nodeOnly = (inputs: string[]) => inputs.filter((f) => f.startsWith("node:") || /node_modules\/ws\//.test(f));

describe("the package in a bundler", () => {
  it("gives a browser bundle of the root no Node module", async () => {
    const inputs = await bundle("browser");
    expect(inputs.some((f) => f.endsWith("dist/index.js"))).toBe(true);
    expect(nodeOnly(inputs)).toEqual([]);
  });

  it("gives Node its own entry, with ws", async () => {
    const inputs = await bundle("node");
    expect(inputs.some((f) => f.endsWith("dist/node.js"))).toBe(true);
    expect(nodeOnly(inputs).length).toBeGreaterThan(0);
  });

  it("ships a single-file ESM build for a <script type=module> page", async () => {
    const browser = await import(pathToFileURL(join(PACKAGE, "dist/browser/jitzoo.js")).href);
    expect(typeof browser.createClient).toBe("function");
    expect(typeof browser.loadModel).toBe("function");
  });
});
