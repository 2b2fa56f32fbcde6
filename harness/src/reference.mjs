// The reference every kernel is checked against is the SDK's (client-sdk-js/src/ops.ts,
// referenceOp): one for the browser and the harness, read from a kernel's ABI metadata.

import { erf, opOfMetadata, operandShapes, referenceOp } from '@jitzoo/client/internal';

export { erf };

/** C for a kernel's metadata and inputs (named operands, as `inputsFor` makes them). */
export const reference = (meta, inputs) => referenceOp(opOfMetadata(meta), inputs);

/**
 * Throws unless every operand the kernel's metadata names has the shape the SDK gives it (the SDK
 * lays out a model's operands, scratch included, by its own `operandShapes`: the two must agree).
 */
export function checkOperandShapes(meta) {
  const sdk = Object.fromEntries(operandShapes(opOfMetadata(meta)));
  for (const [name, shape] of Object.entries(meta.operandShapes)) {
    if (String(sdk[name]) !== String(shape)) {
      throw new Error(`operand ${name} is [${shape}] in the kernel's metadata but [${sdk[name] ?? 'absent'}] in the SDK's operandShapes`);
    }
  }
}
