package dev.jitzoo.space.dynamic;

import dev.jitzoo.proto.kernel.v1.Schedule;

/**
 * FTuner's uKernel on Wasm: a MatMul kernel compiled for {@code rows} rows of the dynamic M axis (K
 * and N fixed), run once per slice of that many rows of A and C. Its figures are FTuner's: {@code pad}
 * the share of useful rows when it alone covers every extent of the range (equation 2), {@code
 * occupancy} the share of the device's cores its calls keep busy (equation 3), {@code intensity} its
 * compute-to-memory ratio in flops per byte, B read once per call (equations 6 and 7).
 */
public record UKernel(int rows, Schedule schedule, double pad, double occupancy, double intensity) {
}
