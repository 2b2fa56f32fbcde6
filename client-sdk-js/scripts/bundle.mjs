// The single-file ESM builds for a plain <script type="module"> page: the package root
// (dist/index.js) into dist/browser/jitzoo.js, and the model worker (dist/worker.js) beside it
// into dist/browser/worker.js, where the root starts it from, and a worker pool's kernel thread
// (dist/thread.js) into dist/browser/thread.js. Both bundled for browsers and
// minified; fails if anything Node-only gets in.
import { build } from 'esbuild';

for (const [entry, outfile] of [['dist/index.js', 'dist/browser/jitzoo.js'], ['dist/worker.js', 'dist/browser/worker.js'],
  ['dist/thread.js', 'dist/browser/thread.js']]) {
  const result = await build({
    entryPoints: [entry],
    bundle: true,
    format: 'esm',
    platform: 'browser',
    minify: true,
    outfile,
    metafile: true,
    logLevel: 'warning',
  });
  const nodeOnly = Object.keys(result.metafile.inputs).filter((f) => f.startsWith('node:') || f.includes('node_modules/ws/'));
  if (nodeOnly.length) throw new Error(`${outfile} pulls Node-only modules: ${nodeOnly.join(', ')}`);
}
