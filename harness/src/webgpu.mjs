// Runs jitzoo WGSL kernels (docs/kernel-abi.md, "WGSL kernels") in Node through Dawn (npm `webgpu`).
//
//   const device = await openDevice();                       // SwiftShader, a software Vulkan GPU
//   const c = await runWgsl(device, source, meta, { A, B }); // Float32Array C
//
// SwiftShader needs the Debian packages `chromium` (its vk_swiftshader_icd.json) and `libvulkan1`;
// openDevice points VK_ICD_FILENAMES at it unless the environment already does. WGSL compile
// errors, validation errors and a lost device come back as thrown Errors with Dawn's messages.

import { existsSync } from 'node:fs';
import { create, globals } from 'webgpu';
import { arrayOf, size, typeOf } from './data.mjs';

Object.assign(globalThis, globals);

const SWIFTSHADER_ICD = '/usr/lib/chromium/vk_swiftshader_icd.json';
/** Dawn instances by their options, alive as long as the process. */
const instances = new Map();

/**
 * Opens a GPUDevice with the WebGPU default limits (what jitzoo's WGSL kernels are made for).
 * `adapter`: 'swiftshader' (software Vulkan; the default), 'gpu' (whatever adapter Dawn finds),
 * or 'null' (Dawn's null backend: shaders compile and validate, nothing computes).
 * The device carries `device.jitzooAdapter` = { backend, vendor, architecture, device, description }.
 */
export async function openDevice({ adapter = 'swiftshader' } = {}) {
  const options = [];
  if (adapter === 'swiftshader') {
    if (!process.env.VK_ICD_FILENAMES) {
      if (!existsSync(SWIFTSHADER_ICD)) {
        throw new Error(`SwiftShader not found at ${SWIFTSHADER_ICD}: apt-get install -y --no-install-recommends `
          + 'chromium libvulkan1, or set VK_ICD_FILENAMES to a Vulkan ICD');
      }
      process.env.VK_ICD_FILENAMES = SWIFTSHADER_ICD;
    }
    options.push('backend=vulkan');
  } else if (adapter === 'null') {
    options.push('backend=null');
  } else if (adapter !== 'gpu') {
    throw new Error(`unknown adapter '${adapter}'; known: swiftshader, gpu, null`);
  }
  let gpuAdapter;
  try {
    // The GPU object must outlive its devices: once it is garbage-collected, Dawn tears down the
    // instance under them and the process crashes a few calls later. Keep one per option set.
    const key = options.join(',');
    if (!instances.has(key)) {
      instances.set(key, create(options));
    }
    gpuAdapter = await instances.get(key).requestAdapter();
  } catch (e) {
    throw new Error(`no WebGPU adapter for '${adapter}': ${e.message}`);
  }
  if (!gpuAdapter) {
    throw new Error(`no WebGPU adapter for '${adapter}'`
      + (adapter === 'swiftshader' ? ` (is libvulkan1 installed and VK_ICD_FILENAMES=${process.env.VK_ICD_FILENAMES} readable?)` : ''));
  }
  const device = await gpuAdapter.requestDevice();
  if (!device) {
    throw new Error(`the '${adapter}' adapter gave no device`);
  }
  const info = gpuAdapter.info ?? {};
  const adapterInfo = {
    backend: adapter,
    vendor: info.vendor ?? '',
    architecture: info.architecture ?? '',
    device: info.device ?? '',
    description: info.description ?? '',
  };
  Object.defineProperty(device, 'jitzooAdapter', { value: adapterInfo, enumerable: true });
  device.lost.then((lost) => { device.jitzooLost = lost; });
  return device;
}

/** Releases a device from openDevice (Dawn keeps the process alive while one is open). */
export function closeDevice(device) {
  device?.destroy();
}

/**
 * Compiles a kernel and builds its pipeline without running it (with the 'null' adapter this is
 * Tint's full validation and nothing else). Throws with the compiler's messages; returns the pipeline.
 */
export async function compileWgsl(device, source, meta) {
  if (typeof meta === 'string') {
    meta = JSON.parse(meta);
  }
  const module = await compiledModule(device, source, meta);
  device.pushErrorScope('validation');
  const pipeline = device.createComputePipeline({ layout: 'auto', compute: { module, entryPoint: meta.entry ?? 'main' } });
  const error = await device.popErrorScope();
  if (error) {
    throw new Error(`WebGPU rejected the pipeline of ${meta.op} ${JSON.stringify(meta.shape)}: ${error.message}`);
  }
  return pipeline;
}

async function compiledModule(device, source, meta) {
  device.pushErrorScope('validation');
  const module = device.createShaderModule({ code: source });
  const compilation = await module.getCompilationInfo();
  const scoped = await device.popErrorScope();
  const errors = compilation.messages.filter((m) => m.type === 'error');
  if (errors.length > 0 || scoped) {
    throw new Error(`WGSL of ${meta.op} ${JSON.stringify(meta.shape)} does not compile:\n`
      + (errors.length > 0 ? errors.map((m) => `  ${m.lineNum}:${m.linePos} ${m.message}`).join('\n') : scoped.message));
  }
  return module;
}

/**
 * Runs one kernel once: uploads every operand of `meta.operands` except "C" from `inputs`
 * (a Map or an object, operand name -> its type's typed array of exactly the operand's size: a Float32Array
 * but where `operandTypes` says otherwise), dispatches
 * `meta.dispatch` workgroups of the entry point `meta.entry`, and returns C as a Float32Array.
 * C starts as NaN everywhere, so an element the kernel forgets to write shows. `meta` is the
 * kernel's metadata, parsed or as JSON text.
 */
export async function runWgsl(device, source, meta, inputs) {
  if (typeof meta === 'string') {
    meta = JSON.parse(meta);
  }
  const get = (name) => (inputs instanceof Map ? inputs.get(name) : inputs?.[name]);
  if (device.jitzooLost) {
    throw new Error(`the device was lost: ${device.jitzooLost.message}`);
  }
  const module = await compiledModule(device, source, meta);
  if (!meta.operands.includes('C')) {
    throw new Error('the metadata names no operand C');
  }
  const operands = meta.operands.map((name) => {
    const elements = size(meta.operandShapes[name]);
    const data = name === 'C' ? new Float32Array(elements).fill(NaN) : get(name);
    const type = typeOf(meta, name), Typed = arrayOf(type);
    if (!(data instanceof Typed) || data.length !== elements) {
      throw new Error(`operand ${name} must be a ${Typed.name} of ${elements} ${type} elements, got `
        + (ArrayBuffer.isView(data) ? `a ${data.constructor.name} of ${data.length}` : typeof data));
    }
    // a typed operand (a float16-weight matmul's B) is bound as its bytes, padded to whole 4-byte words
    const words = new Uint8Array(Math.ceil(data.byteLength / 4) * 4);
    words.set(new Uint8Array(data.buffer, data.byteOffset, data.byteLength));
    return { name, floats: words.length / 4, data: words };
  });

  const buffers = [];
  let scopes = 0;
  try {
    device.pushErrorScope('validation');
    device.pushErrorScope('out-of-memory');
    scopes = 2;
    const entries = operands.map(({ floats, data }, binding) => {
      const buffer = device.createBuffer({
        size: floats * 4,
        usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST | GPUBufferUsage.COPY_SRC,
      });
      buffers.push(buffer);
      device.queue.writeBuffer(buffer, 0, data);
      return { binding, resource: { buffer } };
    });
    const output = { buffer: buffers[meta.operands.indexOf('C')], floats: operands[meta.operands.indexOf('C')].floats };
    const pipeline = device.createComputePipeline({
      layout: 'auto',
      compute: { module, entryPoint: meta.entry ?? 'main' },
    });
    const bindGroup = device.createBindGroup({ layout: pipeline.getBindGroupLayout(0), entries });
    const readback = device.createBuffer({
      size: output.floats * 4,
      usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST,
    });
    buffers.push(readback);
    const encoder = device.createCommandEncoder();
    const pass = encoder.beginComputePass();
    pass.setPipeline(pipeline);
    pass.setBindGroup(0, bindGroup);
    const [x, y, z] = meta.dispatch;
    pass.dispatchWorkgroups(x, y, z);
    pass.end();
    encoder.copyBufferToBuffer(output.buffer, 0, readback, 0, output.floats * 4);
    device.queue.submit([encoder.finish()]);
    scopes = 0;
    const memory = await device.popErrorScope();
    const validation = await device.popErrorScope();
    for (const error of [validation, memory]) {
      if (error) {
        throw new Error(`WebGPU rejected ${meta.op} ${JSON.stringify(meta.shape)}: ${error.message}`);
      }
    }
    await readback.mapAsync(GPUMapMode.READ);
    const c = new Float32Array(readback.getMappedRange().slice(0));
    readback.unmap();
    if (device.jitzooLost) {
      throw new Error(`the device was lost: ${device.jitzooLost.message}`);
    }
    return c;
  } finally {
    for (; scopes > 0; scopes--) {
      await device.popErrorScope();
    }
    for (const buffer of buffers) {
      buffer.destroy();
    }
  }
}
