package dev.jitzoo.proto.rules;

import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jitzoo.proto.kernel.v1.Backend;
import dev.jitzoo.proto.kernel.v1.OpKind;
import dev.jitzoo.proto.kernel.v1.OpSpec;
import dev.jitzoo.proto.kernel.v1.Schedule;
import org.junit.jupiter.api.Test;

/** The schedule rules the compiler, both spaces and the gateway's default share. */
class ScheduleRulesTest {

    private static OpSpec op(OpKind kind, boolean transposedB, int... shape) {
        OpSpec.Builder op = OpSpec.newBuilder().setKind(kind).setTransposeB(transposedB);
        for (int d : shape) {
            op.addShape(d);
        }
        return op.build();
    }

    @Test
    void theSafeDefaultOfEveryOpPassesItsBackendsRules() {
        for (boolean transposed : new boolean[] {false, true}) {
            OpSpec matmul = op(OpKind.OP_KIND_MATMUL, transposed, 7, 13, 5);
            assertNull(ScheduleRules.wasmProblem(ScheduleRules.safeDefault(matmul, Backend.BACKEND_WASM), transposed));
            assertNull(ScheduleRules.wgslTileProblem(ScheduleRules.safeDefault(matmul, Backend.BACKEND_WGSL)));
        }
        assertNull(ScheduleRules.rowOpProblem(ScheduleRules.safeDefault(op(OpKind.OP_KIND_SOFTMAX, false, 4, 8), Backend.BACKEND_WASM)));
    }

    @Test
    void refusesWhatNoKernelCanBeMadeOf() {
        Schedule tile = Schedule.newBuilder().setY0(2).setX0(8).setVectorize(true).build();
        assertNull(ScheduleRules.wasmProblem(tile, false));
        assertContains(ScheduleRules.wasmProblem(tile.toBuilder().setX0(6).build(), false), "multiple of 4");
        assertContains(ScheduleRules.wasmProblem(tile.toBuilder().setY0(8).setX0(16).build(), false), "32 v128 accumulators");
        assertContains(ScheduleRules.wasmProblem(tile.toBuilder().setR0(9).build(), false), "r0 must be 0 to 8");
        assertContains(ScheduleRules.wasmProblem(tile.toBuilder().setX1(12).build(), false), "x1 must be 0 or a multiple of x0");
        assertContains(ScheduleRules.wasmProblem(tile, true), "also set packB");
        assertContains(ScheduleRules.wasmProblem(tile.toBuilder().setVectorize(false).setX0(4).setRelaxedSimd(true).build(), false),
                "needs vectorize");
        assertContains(ScheduleRules.wgslTileProblem(tile.toBuilder().setPackB(true).build()), "Wasm's");
        assertContains(ScheduleRules.wgslTileProblem(tile.toBuilder().setY0(8).setX0(16).setR0(8).setUnroll(8).build()),
                "multiply-adds");
        assertContains(ScheduleRules.rowOpProblem(tile), "vectorize and unroll only");
        assertContains(ScheduleRules.rowOpProblem(Schedule.newBuilder().setUnroll(17).build()), "unroll must be 0 to 16");
    }

    private static void assertContains(String problem, String part) {
        assertTrue(problem != null && problem.contains(part), "'" + problem + "' should mention '" + part + "'");
    }
}
