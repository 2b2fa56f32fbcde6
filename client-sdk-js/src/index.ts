// The public API of `@jitzoo/client`: load a model and run it (it tunes itself between runs), what
// it reports, the errors it throws, and where its kernels are kept. Everything else the project's
// tools use is in `@jitzoo/client/internal`, with no compatibility promise.
export { loadModel } from "./load.js";
export {
  type Model, type LoadOptions, type ModelStats, type OpStats, type RunRecord, type TensorLike, type OutputTensor,
} from "./model/model.js";
export { runUntilSettled } from "./model/drive.js";
export { type GenerateOptions, type GenerateResult } from "./model/generate.js";
export { withKvCache } from "./graph/kv-cache.js";
export { type ReconnectOptions } from "./model/session.js";
export { type TuningOptions } from "./model/tuning.js";
export { type ModelEvents } from "./model/events.js";
export { indexedDbKernelStore, MemoryKernelStore, type KernelStore, type StoredKernel } from "./model/kernel-store.js";
export {
  JitzooError, ConnectError, ConnectionClosed, GatewayError, KernelError, WorkerError, type JitzooErrorCode,
} from "./errors.js";
export { ModelError } from "./graph/onnx.js";
export { probeDevice } from "./probe.js";
