// Correctness: every kernel executed on seeded inputs and compared with the float64 reference.

import { inputsFor, relativeError } from './data.mjs';
import { checkOperandShapes, reference } from './reference.mjs';
import { WORKER_COUNTS, runChecked, runPooledChecked, startPool } from './wasm.mjs';

import { TOLERANCE } from '@jitzoo/client/internal';

export { TOLERANCE };

/**
 * Checks cases one by one (a worker pool of the largest worker count is started when the first
 * split kernel comes); `onResult` sees each { name, backend, ok, error, message, ms }.
 * WGSL cases need a `device` (from webgpu.mjs's openDevice). A split Wasm kernel is checked share
 * by share for every worker count (runChecked), then run by that many real threads.
 */
export async function checkCases(cases, { device, runWgsl, seed = 1, onResult = () => {} } = {}) {
  let pool;
  try {
    return await checkEach(cases, { device, runWgsl, seed, onResult, pool: async () => (pool ??= await startPool(Math.max(...WORKER_COUNTS))) });
  } finally {
    pool?.close();
  }
}

async function checkEach(cases, { device, runWgsl, seed, onResult, pool }) {
  const results = [];
  const references = new Map(); // candidates of one op share inputs and reference: compute each once
  for (const c of cases) {
    const started = performance.now();
    let result;
    try {
      checkOperandShapes(c.meta);
      const key = JSON.stringify([c.meta.op, c.meta.shape, c.meta.transposeB, c.meta.broadcastB, c.meta.epilogue, c.meta.window]);
      if (!references.has(key)) {
        references.clear();
        const inputs = inputsFor(c.meta, seed);
        references.set(key, { inputs, want: reference(c.meta, inputs) });
      }
      const { inputs, want } = references.get(key);
      let got;
      if (c.backend === 'wasm') {
        got = runChecked(c.code, c.meta, inputs);
        if (c.meta.split) await runPooledChecked(await pool(), c.code, c.meta, inputs, got);
      } else if (device && runWgsl) got = await runWgsl(device, c.code, c.meta, inputs);
      else throw new Error('WGSL kernel but no WebGPU device');
      const error = relativeError(got, want);
      result = {
        name: c.name, backend: c.backend, ok: error <= TOLERANCE, error,
        message: error <= TOLERANCE ? '' : `relative error ${error.toExponential(2)} > ${TOLERANCE}`,
      };
    } catch (e) {
      result = { name: c.name, backend: c.backend, ok: false, error: Infinity, message: e.message };
    }
    result.ms = performance.now() - started;
    results.push(result);
    onResult(result);
  }
  return results;
}

const xml = (s) => String(s).replace(/[<>&"]/g, (ch) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;' })[ch]);

/** A JUnit XML report of check results, one test case per kernel. */
export function junitReport(suite, results) {
  const failures = results.filter((r) => !r.ok).length;
  const time = results.reduce((t, r) => t + r.ms, 0) / 1000;
  const cases = results.map((r) => {
    const body = r.ok ? '/>' : `><failure message="${xml(r.message)}"/></testcase>`;
    return `  <testcase classname="${xml(suite)}" name="${xml(r.name)}" time="${(r.ms / 1000).toFixed(3)}"${body}`;
  });
  return `<?xml version="1.0" encoding="UTF-8"?>\n<testsuite name="${xml(suite)}" tests="${results.length}" failures="${failures}" time="${time.toFixed(3)}">\n${cases.join('\n')}\n</testsuite>\n`;
}
