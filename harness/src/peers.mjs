// The runtimes browsers use today, on the same shapes, one thread each: onnxruntime-web (wasm
// backend) and TF.js (wasm backend). Each call copies the activations in and C out, as ours does.

import { createRequire } from 'node:module';
import path from 'node:path';
import { convModel, int8MatmulModel, matmulModel, q4MatmulModel } from './onnx.mjs';

const require = createRequire(import.meta.url);

/** Shapes of a plain matmul or batch_matmul kernel's operands, from its metadata. */
function shapesOf(meta) {
  if (meta.transposeB || meta.broadcastB || (meta.epilogue ?? []).length) {
    throw new Error('peers are timed on plain matmul and batch_matmul only');
  }
  const { A, B, C } = meta.operandShapes;
  return { A, B, C, constantB: meta.op === 'matmul' };
}

/**
 * onnxruntime-web, wasm backend, one thread (or `threads`: its own pool of Wasm threads; the count is
 * fixed for the process at the first session), ready to call: B an initializer for matmul
 * (weights, which it may pre-pack), an input for batch_matmul. Returns { call, result, close, version }.
 */
export async function onnxRuntime(meta, inputs, threads = 1) {
  const ort = await import('onnxruntime-web');
  ort.env.wasm.numThreads = threads;
  ort.env.wasm.proxy = false;
  ort.env.logLevel = 'error';
  const { A, B, C, constantB } = shapesOf(meta);
  const session = await ort.InferenceSession.create(matmulModel(A, B, C, constantB ? inputs.B : null),
    { executionProviders: ['wasm'], graphOptimizationLevel: 'all' });
  const call = async () => {
    const feeds = { A: new ort.Tensor('float32', inputs.A, A) };
    if (!constantB) feeds.B = new ort.Tensor('float32', inputs.B, B);
    return (await session.run(feeds)).C.data;
  };
  return { call, result: await call(), close: () => session.release(), version: ort.env.versions?.web };
}

/**
 * onnxruntime-web's int8 product (DynamicQuantizeLinear, MatMulInteger, Cast, Mul: what its
 * quantizer writes) on a `matmul_int8` kernel's operands, one thread; as {@link onnxRuntime}.
 */
export async function onnxRuntimeInt8(meta, inputs) {
  const { A, B, C } = meta.operandShapes;
  return onnxRuntimeProduct(int8MatmulModel(A, B, C, inputs.B, inputs.BScale), meta, inputs);
}

/**
 * onnxruntime-web's 4-bit product (`com.microsoft.MatMulNBits`, what its quantizer writes) on a
 * `matmul_q4` kernel's operands, one thread; as {@link onnxRuntime}.
 */
export async function onnxRuntimeQ4(meta, inputs) {
  const { A, B, C } = meta.operandShapes;
  return onnxRuntimeProduct(q4MatmulModel(A, B, C, inputs.B, inputs.BScale, inputs.BZero), meta, inputs);
}

/** onnxruntime-web's Conv on the kernel's window and weights, one thread. */
export async function onnxRuntimeConv(meta, inputs) {
  return onnxRuntimeProduct(convModel(meta, inputs.B), meta, inputs);
}

/** A one-product model of A (the only input) in onnxruntime-web, one thread. */
async function onnxRuntimeProduct(model, meta, inputs) {
  const ort = await import('onnxruntime-web');
  ort.env.wasm.numThreads = 1;
  ort.env.wasm.proxy = false;
  ort.env.logLevel = 'error';
  const session = await ort.InferenceSession.create(model, { executionProviders: ['wasm'], graphOptimizationLevel: 'all' });
  const call = async () => (await session.run({ A: new ort.Tensor('float32', inputs.A, meta.operandShapes.A) })).C.data;
  return { call, result: await call(), close: () => session.release(), version: ort.env.versions?.web };
}

let tfReady;
async function tensorflow() {
  tfReady ??= (async () => {
    const tf = await import('@tensorflow/tfjs-core');
    const wasm = await import('@tensorflow/tfjs-backend-wasm');
    wasm.setWasmPaths(path.dirname(require.resolve('@tensorflow/tfjs-backend-wasm/dist/tfjs-backend-wasm.wasm')) + path.sep);
    wasm.setThreadsCount(1);
    if (!(await tf.setBackend('wasm'))) throw new Error('TF.js could not start its wasm backend');
    await tf.ready();
    return tf;
  })();
  return tfReady;
}

/**
 * TF.js, wasm backend, one thread, ready to call: B kept as a tensor for matmul (weights), made per
 * call for batch_matmul; A made per call; C copied out. (Not inside tf.tidy: that alone makes its
 * matmul about 3x slower here.)
 */
export async function tensorflowJs(meta, inputs) {
  const tf = await tensorflow();
  const { A, B, constantB } = shapesOf(meta);
  const weights = constantB ? tf.tensor(inputs.B, B) : null;
  const call = () => {
    const a = tf.tensor(inputs.A, A);
    const b = weights ?? tf.tensor(inputs.B, B);
    const c = tf.matMul(a, b);
    const data = c.dataSync();
    tf.dispose(weights ? [a, c] : [a, b, c]);
    return data;
  };
  return { call, result: call(), close: () => weights?.dispose(), version: tf.version_core };
}
