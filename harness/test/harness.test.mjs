import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { inputsFor, relativeError, random } from '../src/data.mjs';
import { erf, reference } from '../src/reference.mjs';
import { runChecked } from '../src/wasm.mjs';
import { checkCases, junitReport } from '../src/check.mjs';
import { readCases } from '../src/cases.mjs';
import { matmulModel } from '../src/onnx.mjs';
import { measurePeak } from '../src/peak.mjs';
import { addMeta, correctAdd, silentAdd, splitAddMeta, splitAddModule, strayAdd, wrongAdd } from './modules.mjs';

const caseOf = (name, bytes) => ({ name, backend: 'wasm', code: bytes, meta: addMeta });

test('the reference multiplies, transposes, broadcasts and fuses as the ABI says', () => {
  const A = Float32Array.of(1, 2, 3, 4, 5, 6); // 2x3
  const B = Float32Array.of(1, 0, 0, 1, 1, 1); // 3x2
  const meta = { op: 'matmul', shape: [2, 3, 2], epilogue: [] };
  assert.deepEqual([...reference(meta, { A, B })], [4, 5, 10, 11]);
  const Bt = Float32Array.of(1, 0, 1, 0, 1, 1); // B stored [N, K]
  assert.deepEqual([...reference({ ...meta, transposeB: true }, { A, B: Bt })], [4, 5, 10, 11]);
  const fused = { ...meta, epilogue: [{ kind: 'scale', value: 0.5 }, { kind: 'bias' }, { kind: 'relu' }, { kind: 'residual' }] };
  const out = reference(fused, { A, B, Bias: Float32Array.of(-3, 0), Residual: Float32Array.of(1, 1, 1, 1) });
  assert.deepEqual([...out], [1, 3.5, 3, 6.5]);
  const batched = { op: 'batch_matmul', shape: [2, 2, 3, 2], broadcastB: true, epilogue: [] };
  const A2 = Float32Array.of(...A, ...A.map((x) => -x));
  assert.deepEqual([...reference(batched, { A: A2, B })], [4, 5, 10, 11, -4, -5, -10, -11]);
});

test('erf and the row ops match known values', () => {
  assert.ok(Math.abs(erf(0.5) - 0.5204998778130465) < 1e-12);
  assert.ok(Math.abs(erf(-2) + 0.9953222650189527) < 1e-12);
  assert.ok(Math.abs(erf(3.5) - 0.9999992569016276) < 1e-12);
  const soft = reference({ op: 'softmax', shape: [1, 3] }, { A: Float32Array.of(0, Math.log(2), Math.log(5)) });
  assert.deepEqual([...soft].map((x) => +x.toFixed(6)), [0.125, 0.25, 0.625]);
  const norm = reference({ op: 'layer_norm', shape: [1, 2] },
    { A: Float32Array.of(1, 3), Gamma: Float32Array.of(2, 2), Beta: Float32Array.of(0, 1) });
  assert.ok(Math.abs(norm[0] + 2 / Math.sqrt(1 + 1e-5)) < 1e-6 && Math.abs(norm[1] - 1 - 2 / Math.sqrt(1 + 1e-5)) < 1e-6);
});

test('inputs are seeded and the error is relative to the largest reference value', () => {
  assert.deepEqual(inputsFor(addMeta, 3), inputsFor(addMeta, 3));
  assert.notDeepEqual(inputsFor(addMeta, 3), inputsFor(addMeta, 4));
  const next = random(1);
  for (let i = 0; i < 1000; i++) { const x = next(); assert.ok(x >= -1 && x < 1); }
  assert.equal(relativeError(Float32Array.of(10, 0.5), Float64Array.of(10, 0)), 0.05);
  assert.equal(relativeError(Float32Array.of(NaN), Float64Array.of(1)), Infinity);
});

test('a right kernel passes; a wrong, silent or stray one fails with the reason', async () => {
  const results = await checkCases([
    caseOf('right', correctAdd()), caseOf('wrong', wrongAdd()), caseOf('silent', silentAdd()), caseOf('stray', strayAdd()),
  ]);
  assert.deepEqual(results.map((r) => r.ok), [true, false, false, false]);
  assert.match(results[1].message, /relative error/);
  assert.equal(results[2].error, Infinity);
  assert.match(results[3].message, /wrote outside C/);
  assert.throws(() => runChecked(strayAdd(), addMeta, inputsFor(addMeta)), /wrote outside C/);
  const xml = junitReport('harness.test', results);
  assert.match(xml, /tests="4" failures="3"/);
  assert.equal((xml.match(/<failure /g) ?? []).length, 3);
});

test('a split kernel is checked share by share for 1 to 4 workers and on real threads; one that writes past its share fails', async () => {
  const splitCase = (name, n, options) => ({ name, backend: 'wasm', code: splitAddModule(n, options), meta: splitAddMeta(n) });
  // 3 units: four workers are more than the work
  const results = await checkCases([splitCase('split', 3), splitCase('split', 37), splitCase('greedy', 5, { greedy: true })]);
  assert.deepEqual(results.map((r) => r.ok), [true, true, false], JSON.stringify(results));
  assert.match(results[2].message, /units \[0, 2\) of 5 \(worker 1 of 2\) wrote outside their rows of C/);
  // a v2 kernel needs a shared memory: the SDK's host refuses a plain one
  const { instantiateKernel } = await import('@jitzoo/client/internal');
  assert.throws(() => instantiateKernel(new WebAssembly.Module(splitAddModule(3)), splitAddMeta(3), new WebAssembly.Memory({ initial: 1 })),
    /split kernel \(ABI v2\) imports a shared memory/);
});

test('a case directory is read with its metadata; an empty one is an error', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'harness-'));
  assert.throws(() => readCases(dir), /no \.wasm or \.wgsl kernels/);
  fs.writeFileSync(path.join(dir, 'add.wasm'), correctAdd());
  assert.throws(() => readCases(dir), /no metadata/);
  fs.writeFileSync(path.join(dir, 'add.wasm.json'), JSON.stringify(addMeta));
  const [c] = readCases(dir);
  assert.equal(c.name, 'add');
  assert.deepEqual(c.meta, addMeta);
  fs.rmSync(dir, { recursive: true });
});

test('the one-node ONNX model runs in onnxruntime-web and matches the reference', async () => {
  const ort = await import('onnxruntime-web');
  ort.env.wasm.numThreads = 1;
  const meta = { op: 'batch_matmul', shape: [2, 3, 4, 5], epilogue: [] };
  const inputs = { A: new Float32Array(24).map((_, i) => i / 7), B: new Float32Array(40).map((_, i) => 1 - i / 9) };
  for (const constantB of [false, true]) {
    const session = await ort.InferenceSession.create(matmulModel([2, 3, 4], [2, 4, 5], [2, 3, 5], constantB ? inputs.B : null));
    const feeds = { A: new ort.Tensor('float32', inputs.A, [2, 3, 4]) };
    if (!constantB) feeds.B = new ort.Tensor('float32', inputs.B, [2, 4, 5]);
    const { C } = await session.run(feeds);
    assert.ok(relativeError(C.data, reference(meta, inputs)) < 1e-6);
    await session.release();
  }
});

test("onnxruntime-web's int8 product (DynamicQuantizeLinear, MatMulInteger, Cast, Mul) matches the SDK's int8 reference exactly", async () => {
  const { onnxRuntimeInt8 } = await import('../src/peers.mjs');
  for (const [m, k, n, shift] of [[7, 33, 19, 0.3], [16, 64, 40, -1.2], [5, 10, 8, 0]]) {
    const meta = { op: 'matmul_int8', shape: [m, k, n], epilogue: [], operands: ['A', 'B', 'BScale', 'C', 'Work'],
      operandShapes: { A: [m, k], B: [k, n], BScale: [n], C: [m, n], Work: [m, Math.ceil(k / 8) * 8] },
      operandTypes: { B: 'int8', Work: 'int16' }, scratch: ['Work'] };
    const inputs = inputsFor(meta, m + k);
    inputs.A = inputs.A.map((x) => 3 * x + shift); // a range off centre: a zero point away from 128
    const ort = await onnxRuntimeInt8(meta, inputs);
    assert.ok(relativeError(ort.result, reference(meta, inputs)) < 1e-6, `${m}x${k}x${n}`);
    ort.close();
  }
});

test("onnxruntime-web's MatMulNBits (4 bits, blocks of 32, 4-bit zero points) matches the SDK's 4-bit reference", async () => {
  const { onnxRuntimeQ4 } = await import('../src/peers.mjs');
  for (const [m, k, n] of [[7, 64, 19], [3, 96, 8], [1, 384, 40]]) {
    const blocks = Math.ceil(k / 32);
    const meta = { op: 'matmul_q4', shape: [m, k, n], epilogue: [], operands: ['A', 'B', 'BScale', 'BZero', 'C', 'Work'],
      operandShapes: { A: [m, k], B: [n, blocks * 16], BScale: [n, blocks], BZero: [n, Math.ceil(blocks / 2)], C: [m, n], Work: [m, blocks * 32] },
      operandTypes: { B: 'uint8', BZero: 'uint8' }, scratch: ['Work'] };
    const inputs = inputsFor(meta, m + k);
    const ort = await onnxRuntimeQ4(meta, inputs);
    assert.ok(relativeError(ort.result, reference(meta, inputs)) < 1e-5, `${m}x${k}x${n}`);
    ort.close();
  }
});

test("onnxruntime-web's Conv matches the SDK's conv reference over a window with pads, strides, dilations and groups", async () => {
  const { onnxRuntimeConv } = await import('../src/peers.mjs');
  // [N, C, H, W, M, KH, KW], window, output [OH, OW]
  for (const [shape, window, [oh, ow]] of [
    [[1, 4, 9, 11, 6, 3, 3], { strides: [1, 1], dilations: [1, 1], pads: [1, 1, 1, 1], group: 1 }, [9, 11]],
    [[2, 6, 10, 13, 6, 3, 2], { strides: [2, 1], dilations: [2, 2], pads: [1, 0, 2, 1], group: 3 }, [5, 12]],
    [[1, 8, 1, 30, 8, 1, 5], { strides: [1, 1], dilations: [1, 1], pads: [0, 2, 0, 2], group: 8 }, [1, 30]],
  ]) {
    const [n, c, h, w, m, kh, kw] = shape;
    const meta = { op: 'conv', shape, epilogue: [], window, operands: ['A', 'B', 'C', 'Work'],
      operandShapes: { A: [n, c, h, w], B: [m, c / window.group, kh, kw], C: [n, m, oh, ow], Work: [n * oh, (c / window.group) * kh * kw * Math.min(ow, 16)] },
      scratch: ['Work'] };
    const inputs = inputsFor(meta, n + c + h);
    const ort = await onnxRuntimeConv(meta, inputs);
    assert.ok(relativeError(ort.result, reference(meta, inputs)) < 1e-5, shape.join('x'));
    ort.close();
  }
});

test('the peak loops validate and run', async () => {
  const { peakRuntime } = await import('../src/peak.mjs');
  assert.ok(peakRuntime('dot', 1000).flops > 0);
  const madd = await measurePeak(false, { iterations: 10_000 });
  assert.ok(Number.isFinite(madd) && madd > 0);
  const relaxed = await measurePeak(true, { iterations: 10_000 });
  assert.ok(relaxed === null || (Number.isFinite(relaxed) && relaxed > 0));
});
