import { create } from "@bufbuild/protobuf";
import { Backend, OpKind, OpSpecSchema, type OpSpec } from "./gen/jitzoo/kernel/v1/kernel_pb.js";

/** A named set of ops to tune, as a page running one model would. */
export interface Workload {
  /** The name the CLI knows it by. */
  name: string;
  /** Where its kernels run. */
  backend: Backend;
  /** The ops, each with a fixed shape. */
  ops: OpSpec[];
}

/** A MatMul op: C[M,N] = A[M,K] × B[K,N]. */
export const matmul = (m: number, k: number, n: number): OpSpec => create(OpSpecSchema, { kind: OpKind.MATMUL, shape: [m, k, n] });

/** A batched MatMul op: C[b] = A[b] × B[b] for each of `batch` pairs. */
export const batchMatmul = (batch: number, m: number, k: number, n: number): OpSpec =>
  create(OpSpecSchema, { kind: OpKind.BATCH_MATMUL, shape: [batch, m, k, n] });

/** Workloads the CLI knows by name. */
export const WORKLOADS: Readonly<Record<string, Workload>> = {
  /** One small MatMul: the thinnest thread through every part of the suite. */
  skeleton: { name: "skeleton", backend: Backend.WASM, ops: [matmul(128, 256, 96)] },
};
