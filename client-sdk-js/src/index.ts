export { createClient, ConnectionClosed, GatewayError, type ClientEvents, type JitzooClient } from "./client.js";
export { probeDevice, probeFeatures, fingerprintOf, type DeviceFeatures } from "./probe.js";
export { tune, TOLERANCE, REPORT_TOP_N, type TuneResult, type OpResult, type TuneOptions } from "./tuner.js";
export { WORKLOADS, type Workload } from "./workloads.js";
export { loadKernel, readMetadata, OperandMemory, type LoadedKernel, type KernelMetadata } from "./wasm-executor.js";
export { referenceMatMul, maxRelativeError, dimsOf, flopsOf, seededFloats } from "./reference.js";
export { time, type Timing } from "./timing.js";
