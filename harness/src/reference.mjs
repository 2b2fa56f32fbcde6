// The reference every kernel is checked against is the SDK's (client-sdk-js/src/ops.ts,
// referenceOp): one for the browser and the harness, read from a kernel's ABI metadata.

import { erf, opOfMetadata, referenceOp } from '@jitzoo/client/internal';

export { erf };

/** C for a kernel's metadata and inputs (named operands, as `inputsFor` makes them). */
export const reference = (meta, inputs) => referenceOp(opOfMetadata(meta), inputs);
