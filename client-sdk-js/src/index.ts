export {
  createClient,
  type ClientEvent, type ClientEvents, type ClientFrameInit, type ClientOptions, type ClientState,
  type JitzooClient, type Listener, type SocketConstructor, type SocketLike,
} from "./client.js";
export {
  JitzooError, ConnectError, ConnectionClosed, GatewayError, KernelError, WorkerError, type JitzooErrorCode,
} from "./errors.js";
export { probeDevice, probeFeatures, fingerprintOf, type DeviceFeatures } from "./probe.js";
export {
  tune, TOLERANCE, REPORT_TOP_N, DEFAULT_CREDITS, type TuneResult, type OpResult, type TuneOptions,
} from "./tuner.js";
export { OpBench, type KernelTiming, type KernelVerdict } from "./op-bench.js";
export { WORKLOADS, matmul, batchMatmul, type Workload } from "./workloads.js";
export { loadKernel, readMetadata, OperandMemory, ABI_SECTION, type LoadedKernel, type KernelMetadata } from "./wasm-executor.js";
export { referenceMatMul, maxRelativeError, RELATIVE_ERROR_FLOOR, seededFloats, erf } from "./reference.js";
export {
  referenceOp, operandShapes, opKey, opName, dimsOf, flopsOf, checkOp, DEFAULT_LAYER_NORM_EPSILON, type MatMulDims,
} from "./ops.js";
export { time, median, type Timing, type TimingOptions } from "./timing.js";
export { clockInfo, batchSize, MIN_TICKS, SLICE_MS, type ClockInfo } from "./clock.js";
export {
  runMicrobench, microbenchSpeedups, primitiveVector, PRIMITIVE_HELPS, type PrimitivePair, type PrimitiveMeasurement, type MicrobenchOptions, type MicrobenchSummary,
} from "./microbench.js";
export { measurePeakGflops, peakLoop, type PeakLoop } from "./peak.js";
export * as gateway from "./gen/jitzoo/gateway/v1/gateway_pb.js";
export * as kernel from "./gen/jitzoo/kernel/v1/kernel_pb.js";
export {
  loadModel, type Model, type LoadOptions, type ModelStats, type OpStats, type RunRecord, type TensorLike, type OutputTensor,
} from "./model/model.js";
export { type ReconnectOptions } from "./model/session.js";
export { ModelError, SUPPORTED_OPS, OPSETS, type GraphInput } from "./model/onnx.js";
export { type ModelEvents, type ModelEvent, type ModelListener } from "./model/events.js";
export { indexedDbKernelStore, MemoryKernelStore, type KernelStore, type StoredKernel } from "./model/kernel-store.js";
export { DEFAULT_TUNING, type TuningOptions } from "./model/op-tuner.js";
export { feedsFor, runUntilSettled, convergence, NEAR_FINAL, type Convergence, type DriveLimits } from "./model/drive.js";
