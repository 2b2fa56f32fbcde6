// `@jitzoo/client/internal`: what the project's own tools need beyond the public API (index.ts) —
// the harness (kernels run, checked and timed outside a model), the benches, the drill and the
// demo (tools/), and the SDK's tests. No compatibility promise: names here change with the code.
export * from "./index.js";
export { createClient, type ClientOptions, type JitzooClient } from "./client.js";
export { probeFeatures, fingerprintOf, type DeviceFeatures } from "./probe.js";
export { tune, TOLERANCE, REPORT_TOP_N, DEFAULT_CREDITS, type TuneResult, type OpResult, type TuneOptions } from "./tuner.js";
export { OpBench, type KernelTiming, type KernelVerdict } from "./op-bench.js";
export { WORKLOADS, matmul, batchMatmul, type Workload } from "./workloads.js";
export { loadKernel, readMetadata, instantiateKernel, OperandMemory, ABI_SECTION, type LoadedKernel, type KernelMetadata } from "./wasm/executor.js";
export { genericModuleBytes } from "./wasm/generic.js";
export { referenceMatMul, maxRelativeError, RELATIVE_ERROR_FLOOR, seededFloats, seededRandom, erf } from "./reference.js";
export {
  referenceOp, opOfMetadata, operandShapes, opKey, opName, dimsOf, flopsOf, checkOp, DEFAULT_LAYER_NORM_EPSILON, type MatMulDims,
} from "./ops.js";
export { time, median, type Timing, type TimingOptions } from "./timing.js";
export { clockInfo, batchSize, MIN_TICKS, SLICE_MS, type ClockInfo } from "./clock.js";
export {
  runMicrobench, microbenchSpeedups, primitiveVector, PRIMITIVE_HELPS,
  type PrimitivePair, type PrimitiveMeasurement, type MicrobenchOptions, type MicrobenchSummary,
} from "./microbench.js";
export { measurePeakGflops, peakLoop, type PeakLoop } from "./peak.js";
export { usePlatform, type Platform } from "./platform.js";
export { shareOf } from "./threads/control.js";
export { WorkerPool } from "./threads/pool.js";
export * as gateway from "./gen/jitzoo/gateway/v1/gateway_pb.js";
export * as kernel from "./gen/jitzoo/kernel/v1/kernel_pb.js";
export {
  ClientFrameSchema, ServerFrameSchema, ErrorCode, ProtocolVersion, SessionLimit, type KernelOffer,
} from "./gen/jitzoo/gateway/v1/gateway_pb.js";
export {
  Backend, DeviceProfileSchema, KernelArtifactSchema, OpSpecSchema, type DeviceProfile, type KernelArtifact, type OpSpec,
} from "./gen/jitzoo/kernel/v1/kernel_pb.js";
export { decodeModel, SUPPORTED_OPS, OPSETS, type GraphInput } from "./graph/onnx.js";
export { DEFAULT_TUNING } from "./model/tuning.js";
export { feedsFor, convergence, NEAR_FINAL, onServedKernels, runUntil, runUntilServed, type Convergence, type DriveLimits } from "./model/drive.js";
export { decoderLayout, generateTokens, type DecoderLayout, type Step } from "./model/generate.js";
export { type GpuModel } from "./webgpu/model.js";
