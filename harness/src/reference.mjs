// The reference every kernel is checked against is the SDK's (client-sdk-js/src/ops.ts,
// referenceOp): one for the browser and the harness, read from a kernel's ABI metadata.

import { opOfMetadata, referenceOp } from '../../client-sdk-js/dist/ops.js';

export { erf } from '../../client-sdk-js/dist/reference.js';

/** C for a kernel's metadata and inputs (named operands, as `inputsFor` makes them). */
export const reference = (meta, inputs) => referenceOp(opOfMetadata(meta), inputs);
