package dev.jitzoo.space.lite;

import dev.jitzoo.proto.kernel.v1.Schedule;
import dev.jitzoo.space.domain.OpShapes;

/**
 * A light analytic model of one Wasm candidate on a superscalar core, to put likely winners first:
 * the predicted fraction of the core's fused-multiply-add peak. Per trip of the k loop it counts
 * the multiply-adds, the loads (one per A value, one per B vector) and the loop's bookkeeping, and
 * takes the slowest of: the FP pipes (2 multiply-adds a cycle), the front end (5 instructions a
 * cycle; mul+add is two), the load ports (2 a cycle) and the accumulator chains (a relaxed madd
 * waits 4 cycles on its accumulator; mul+add sums a trip's products first and waits 3 on one add).
 * Then padding (edge tiles run at about half speed) and the operand the loop order streams: with
 * rows outside every band reads all of B (2/y0 bytes a flop), with columns outside every panel reads
 * all of A (2/x0); past the L2 estimate that stream is held to 16 bytes a cycle.
 */
final class WasmModel {

    static final double FMA_PER_CYCLE = 2, ISSUE_WIDTH = 5, LOADS_PER_CYCLE = 2, LOOP_OVERHEAD = 4;
    static final double MADD_LATENCY = 4, ADD_LATENCY = 3, EDGE_SPEED = 0.5, STREAM_BYTES_PER_CYCLE = 16;
    static final long L2_BYTES = 1 << 20;

    private WasmModel() {
    }

    static double predict(OpShapes op, Schedule s, WasmSpace.Target device) {
        int lanes = s.getVectorize() ? WasmSpace.LANES : 1;
        double columns = (double) s.getX0() / lanes;
        int depth = Math.max(1, s.getR0()) * Math.max(1, s.getUnroll());
        double madds = columns * s.getY0() * depth;
        double loads = (columns + s.getY0()) * depth;
        double instructions = (s.getRelaxedSimd() ? madds : 2 * madds) + loads + LOOP_OVERHEAD;
        double chain = s.getRelaxedSimd() ? MADD_LATENCY * depth : ADD_LATENCY + (depth > 1 ? ADD_LATENCY : 0);
        double cycles = Math.max(Math.max(madds / FMA_PER_CYCLE, instructions / ISSUE_WIDTH),
                Math.max(loads / LOADS_PER_CYCLE, chain));
        double compute = (madds / FMA_PER_CYCLE) / cycles;

        double full = (double) (op.m() - op.m() % s.getY0()) * (op.n() - op.n() % s.getX0()) / ((double) op.m() * op.n());
        double padding = 1 / (full + (1 - full) / EDGE_SPEED);

        long streamedBytes = 4L * op.k() * (s.getColumnsOuter() ? op.m() : op.n());
        double bytesPerFlop = 2.0 / (s.getColumnsOuter() ? s.getX0() : s.getY0());
        double flopsPerCycle = FMA_PER_CYCLE * 2 * lanes * compute;
        double memory = streamedBytes <= L2_BYTES ? 1
                : Math.min(1, STREAM_BYTES_PER_CYCLE / (bytesPerFlop * flopsPerCycle));
        return compute * padding * memory;
    }
}
