// The single-file ESM build for a plain <script type="module"> page: the package root (dist/index.js)
// bundled for browsers, minified, into dist/browser/jitzoo.js. Fails if anything Node-only gets in.
import { build } from 'esbuild';

const result = await build({
  entryPoints: ['dist/index.js'],
  bundle: true,
  format: 'esm',
  platform: 'browser',
  minify: true,
  outfile: 'dist/browser/jitzoo.js',
  metafile: true,
  logLevel: 'warning',
});
const inputs = Object.keys(result.metafile.inputs);
const nodeOnly = inputs.filter((f) => f.startsWith('node:') || f.includes('node_modules/ws/'));
if (nodeOnly.length) throw new Error(`the browser bundle pulls Node-only modules: ${nodeOnly.join(', ')}`);
