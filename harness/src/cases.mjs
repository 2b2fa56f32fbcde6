// A directory of kernel artifacts, as `./jitzoo codegen cases` writes it: NAME.wasm or NAME.wgsl, each
// with its metadata beside it (NAME.wasm.json; a Wasm module also carries it in its `jitzoo.abi` section).

import fs from 'node:fs';
import path from 'node:path';
import { ABI_SECTION } from '@jitzoo/client/internal';

const BACKENDS = { '.wasm': 'wasm', '.wgsl': 'wgsl' };

function metadataOf(file, backend, code) {
  for (const candidate of [`${file}.json`, file.replace(/\.(wasm|wgsl)$/, '.json')]) {
    if (fs.existsSync(candidate)) {
      try {
        return JSON.parse(fs.readFileSync(candidate, 'utf8'));
      } catch (e) {
        throw new Error(`${candidate}: not valid JSON (${e.message})`);
      }
    }
  }
  if (backend === 'wasm') {
    const sections = WebAssembly.Module.customSections(new WebAssembly.Module(code), ABI_SECTION);
    if (sections.length === 1) return JSON.parse(new TextDecoder().decode(sections[0]));
  }
  throw new Error(`${file}: no metadata (${path.basename(file)}.json) beside it`);
}

/** One artifact: { name, backend, file, code (bytes or WGSL text), meta }. */
export function readCase(file) {
  const backend = BACKENDS[path.extname(file)];
  if (!backend) throw new Error(`${file}: not a kernel (expected .wasm or .wgsl)`);
  const code = backend === 'wasm' ? new Uint8Array(fs.readFileSync(file)) : fs.readFileSync(file, 'utf8');
  return { name: path.basename(file, path.extname(file)), backend, file, code, meta: metadataOf(file, backend, code) };
}

/** Every artifact of a directory, sorted by name; a clear error when there is none. */
export function readCases(dir) {
  if (!fs.existsSync(dir) || !fs.statSync(dir).isDirectory()) throw new Error(`${dir}: no such directory`);
  const files = fs.readdirSync(dir).filter((f) => BACKENDS[path.extname(f)]).sort();
  if (files.length === 0) throw new Error(`${dir}: no .wasm or .wgsl kernels in it`);
  return files.map((f) => readCase(path.join(dir, f)));
}
