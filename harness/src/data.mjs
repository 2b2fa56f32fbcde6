// Operand data for a kernel: seeded, so every runtime and every run sees the same numbers.

import { seededRandom } from '@jitzoo/client/internal';

/** A small, fast, seeded generator (the SDK's mulberry32) of floats uniform in [-1, 1). */
export function random(seed) {
  const next = seededRandom(seed);
  return () => next() * 2 - 1;
}

/** Number of floats of a shape. */
export const size = (shape) => shape.reduce((a, b) => a * b, 1);

/** An operand's element type as the metadata's `operandTypes` says (float32 when it does not). */
export const typeOf = (meta, name) => meta.operandTypes?.[name] ?? 'float32';

const ARRAYS = { float32: Float32Array, int8: Int8Array, uint8: Uint8Array, int16: Int16Array, float16: Uint16Array };

/** The typed array class of an element type (`float16`: its bits, a Uint16Array). */
export const arrayOf = (type) => ARRAYS[type];

/** Operands a kernel writes besides C (the metadata's `scratch`): neither inputs nor results. */
export const scratchOf = (meta) => meta.scratch ?? [];

/** A typed array over `buffer` for operand `name`: its type's view of its elements. */
export const viewOf = (meta, name, buffer, offset, length = size(meta.operandShapes[name])) =>
  new ARRAYS[typeOf(meta, name)](buffer, offset, length);

/** Bytes of operand `name`. */
export const bytesOf = (meta, name) => size(meta.operandShapes[name]) * ARRAYS[typeOf(meta, name)].BYTES_PER_ELEMENT;

/**
 * The operands a kernel reads (every one but C), filled from one seed, keyed by name: floats in
 * [-1, 1), integers over their type's whole range, and a quantized op's scales small and positive
 * (as quantizers make them).
 */
export function inputsFor(meta, seed = 1) {
  const next = random(seed);
  const inputs = {};
  for (const name of meta.operands) {
    if (name === 'C' || scratchOf(meta).includes(name)) continue;
    const type = typeOf(meta, name);
    const data = new ARRAYS[type](size(meta.operandShapes[name]));
    // an int8 matmul's float A is quantized by the kernel: seeded floats serve
    const value = type === 'int8' ? () => Math.floor(next() * 128)
      : type === 'uint8' ? () => Math.floor((next() + 1) * 128) // a 4-bit matmul's nibbles, two to a byte
      // float16 bits of values in ±[2^-5, 2): sign, exponent 10..15, any mantissa (never NaN)
      : type === 'float16' ? () => (next() < 0 ? 0x8000 : 0) | (10 + Math.floor((next() + 1) * 3)) << 10 | Math.floor((next() + 1) * 512)
      : name.endsWith('Scale') ? () => 0.001 + 0.01 * Math.abs(next()) : next;
    for (let i = 0; i < data.length; i++) data[i] = value();
    inputs[name] = data;
  }
  return inputs;
}

/**
 * How far a result is from the reference: the largest absolute difference over the largest
 * reference magnitude (at least 1), so sums that cancel to near zero do not inflate it.
 * NaN anywhere (an element never written) is an infinite error.
 */
export function relativeError(got, want) {
  if (got.length !== want.length) return Infinity;
  let diff = 0;
  let scale = 1;
  for (let i = 0; i < want.length; i++) {
    const d = Math.abs(got[i] - want[i]);
    if (!(d <= diff)) diff = Number.isNaN(d) ? Infinity : d;
    const w = Math.abs(want[i]);
    if (w > scale) scale = w;
  }
  return diff / scale;
}
