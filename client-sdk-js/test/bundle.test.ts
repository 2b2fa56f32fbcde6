import { build } from "esbuild";
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
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
writeFileSync(join(app, "main.js"), 'import { probeDevice, loadModel } from "@jitzoo/client";\nglobalThis.jitzoo = { probeDevice, loadModel };\n');
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
    expect(typeof browser.probeDevice).toBe("function");
    expect(typeof browser.loadModel).toBe("function");
  });

  it("publishes the runtime only: no tool, bench, demo or drill, and runtime dependencies", () => {
    const [pack] = JSON.parse(execFileSync("npm", ["pack", "--dry-run", "--json", "--ignore-scripts"], { cwd: PACKAGE, encoding: "utf8" }));
    const files: string[] = pack.files.map((f: { path: string }) => f.path);
    expect(files).toContain("dist/index.js");
    expect(files).toContain("dist/internal.js");
    expect(files).toContain("dist/cli/generate.js"); // the package's two CLIs (bin): tune and generate
    expect(files.filter((f) => /^tools\/|^dist\/cli\/(?!(tune|generate|io)\.)|demo|drill|bench-|^test\//.test(f))).toEqual([]);
    const manifest = JSON.parse(readFileSync(join(PACKAGE, "package.json"), "utf8"));
    expect(Object.keys(manifest.dependencies).sort()).toEqual(["@bufbuild/protobuf", "ws"]);
  });

  it("keeps the public API small: at most 28 names from the root", () => {
    const index = readFileSync(join(PACKAGE, "src/index.ts"), "utf8");
    const names = [...index.matchAll(/export\s*\{([^}]*)\}/g)].flatMap((m) => m[1].split(",")).map((n) => n.trim()).filter(Boolean);
    expect(names.length).toBeGreaterThan(10);
    expect(names.length).toBeLessThanOrEqual(28); // 25, generate()'s options and result, and withKvCache
    expect(index).not.toMatch(/export \*/);
  });
});
