import { create } from "@bufbuild/protobuf";
import { Backend, OpKind, OpSpecSchema, type OpSpec } from "./gen/jitzoo/kernel/v1/kernel_pb.js";

/** A named set of ops to tune, as a page running one model would. */
export interface Workload {
  name: string;
  backend: Backend;
  ops: OpSpec[];
}

const matmul = (m: number, k: number, n: number) => create(OpSpecSchema, { kind: OpKind.MATMUL, shape: [m, k, n] });

/** Workloads the CLI knows by name. */
export const WORKLOADS: Record<string, Workload> = {
  /** One small MatMul: the thinnest thread through every part of the suite. */
  skeleton: { name: "skeleton", backend: Backend.WASM, ops: [matmul(128, 256, 96)] },
};
