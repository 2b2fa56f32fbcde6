package dev.jitzoo.compiler.kernel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/** Ops and schedules no correct kernel exists for are refused with the reason, before any code is emitted. */
class InvalidKernelTest {

    private final WasmCompiler compiler = new WasmCompiler();
    private final Op op = Op.matmul(8, 8, 8);

    @Test
    void refusesImpossibleOps() {
        assertRefused(() -> Op.matmul(0, 4, 4), "positive");
        assertRefused(() -> Op.matmul(4, -3, 4), "positive");
        assertRefused(() -> Op.batchMatmul(0, 4, 4, 4), "positive");
        assertRefused(() -> new Op(OpKind.MATMUL, 4, 4), "3 dimensions");
        assertRefused(() -> new Op(OpKind.BATCH_MATMUL, 4, 4, 4), "4 dimensions");
        assertRefused(() -> new Op(null, 4, 4, 4), "kind");
        assertRefused(() -> new Op(OpKind.MATMUL, Arrays.asList(4, null, 4)), "dimensions");
        assertRefused(() -> Op.matmul(100_000, 100_000, 100_000), "exceed the limit");
        // sizes whose products wrap around 64 bits (to 0 here) are still too large
        assertRefused(() -> Op.batchMatmul(16, 1 << 30, 1 << 30, 1 << 30), "operands of 9223372036854775807 elements in all exceed");
        assertRefused(() -> new Op(OpKind.LAYER_NORM, Integer.MAX_VALUE, Integer.MAX_VALUE), "exceed the limit");
        assertRefused(() -> Op.matmul(4, 4, 4).withBroadcastB(true), "batch_matmul only");
        assertRefused(() -> Op.matmul(4, 4, 4).withEpilogue(Epilogue.of(Epilogue.Kind.BIAS), Epilogue.of(Epilogue.Kind.BIAS)),
                "at most one bias");
        assertRefused(() -> Epilogue.scale(Float.NaN), "finite");
        assertRefused(() -> new Epilogue(Epilogue.Kind.RELU, 2f), "takes no value");
        assertRefused(() -> Epilogue.parse("swish"), "unknown epilogue 'swish'");
        assertRefused(() -> Epilogue.parse("scale"), "needs a value");
        assertRefused(() -> new Op(OpKind.SOFTMAX, 4, 4).withEpilogue(Epilogue.of(Epilogue.Kind.RELU)), "matmuls and convolutions only");
        assertRefused(() -> Op.matmul(4, 4, 4).withWindow(ConvWindow.PLAIN), "convolutions only");
        assertRefused(() -> Op.conv(1, 4, 8, 8, 4, 3, 3, ConvWindow.PLAIN.withStrides(2000, 1)), "at most 1024");
        assertRefused(() -> new Op(OpKind.ADD, 4, 4), "1 dimensions");
        assertRefused(() -> new Op(OpKind.LAYER_NORM, 0, 4), "positive");
        assertRefused(() -> compiler.compile(new Op(OpKind.SOFTMAX, 4, 4), Schedule.registerTile(1, 4, true, 0)),
                "vectorize and unroll only");
        assertRefused(() -> compiler.compile(new Op(OpKind.ADD, 9), new Schedule(0, 0, 0, 0, 0, 0, true, 99)), "unroll");
    }

    @Test
    void refusesImpossibleSchedules() {
        assertRefused(() -> new Schedule(-1, 1, 0, 0, 0, 0, true, 0), "0 or positive");
        assertRefused(() -> compile(Schedule.registerTile(0, 4, true, 0)), "y0 >= 1");
        assertRefused(() -> compile(Schedule.registerTile(1, 0, false, 0)), "x0 >= 1");
        assertRefused(() -> compile(Schedule.registerTile(2, 6, true, 0)), "multiple of 4");
        assertRefused(() -> compile(Schedule.registerTile(8, 16, true, 0)), "32 v128 accumulators");
        assertRefused(() -> compile(Schedule.registerTile(4, 5, false, 0)), "20 f32 accumulators");
        assertRefused(() -> compile(Schedule.registerTile(1, 4, true, 0).withReductionTile(9)), "r0");
        assertRefused(() -> compile(Schedule.registerTile(1, 4, true, 17)), "unroll");
        assertRefused(() -> compile(Schedule.registerTile(2, 8, true, 0).withCacheTile(12, 0, 0)), "x1 must be");
        assertRefused(() -> compile(Schedule.registerTile(2, 8, true, 0).withCacheTile(0, 3, 0)), "y1 must be");
        assertRefused(() -> compile(Schedule.registerTile(2, 8, false, 0).withRelaxedSimd(true)), "needs vectorize");
        assertRefused(() -> compiler.compile(op.withTransposedB(true), Schedule.registerTile(2, 8, true, 0)), "set packB");
    }

    @Test
    void refusesKernelsOverTheSizeBudget() {
        Schedule huge = Schedule.registerTile(1, 64, true, 16).withReductionTile(8);
        InvalidKernelException e = assertThrows(InvalidKernelException.class, () -> compiler.compile(Op.matmul(9, 200, 70), huge));
        assertTrue(e.getMessage().contains("exceeds the budget of 32768 bytes"), e.getMessage());
    }

    @Test
    void theReferenceRefusesOperandsOfTheWrongSize() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> ReferenceKernels.matmul(Op.matmul(2, 3, 4), new float[6], new float[11]));
        assertEquals("B has 11 floats, the op needs 12", e.getMessage());
    }

    private void compile(Schedule schedule) {
        compiler.compile(op, schedule);
    }

    private static void assertRefused(Executable call, String reason) {
        InvalidKernelException e = assertThrows(InvalidKernelException.class, call);
        assertTrue(e.getMessage().contains(reason), "'" + e.getMessage() + "' should mention '" + reason + "'");
    }
}
