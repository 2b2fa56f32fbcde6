package dev.jitzoo.compiler.kernel;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Convolution kernels in wasmtime against the definition in double: windows with pads on every
 * side (asymmetric too), strides, dilations, groups (depthwise included), 1-D convolutions, rows
 * narrower than a vector and tiles cut at the row's end, every register tile form and the epilogues
 * (a bias per output channel). Split kernels run in V8 through the harness ({@code ./jitzoo test kernels}).
 */
class ConvKernelTest {

    private static final double TOLERANCE = 1e-5;
    private static final WasmCompiler COMPILER = new WasmCompiler();

    /** Convolutions whose windows cover what ONNX's Conv allows in two dimensions (and one: H = KH = 1). */
    static List<Op> convs() {
        List<Op> ops = new ArrayList<>();
        ops.add(Op.conv(2, 5, 9, 11, 7, 3, 3, ConvWindow.PLAIN.withPads(1, 1, 1, 1)));
        ops.add(Op.conv(1, 3, 13, 18, 6, 3, 2, ConvWindow.PLAIN.withStrides(2, 1).withDilations(2, 2).withPads(1, 0, 2, 1)));
        ops.add(Op.conv(1, 6, 10, 21, 6, 3, 3, ConvWindow.PLAIN.withPads(1, 1, 1, 1).withGroup(6))); // depthwise: read in place
        ops.add(Op.conv(2, 5, 11, 13, 5, 3, 2, ConvWindow.PLAIN.withStrides(2, 3).withDilations(2, 1).withPads(2, 1, 0, 3).withGroup(5)));
        ops.add(Op.conv(1, 3, 2, 9, 3, 2, 7, ConvWindow.PLAIN.withPads(0, 3, 0, 3).withGroup(3))); // one output row
        ops.add(Op.conv(1, 4, 1, 30, 4, 1, 5, ConvWindow.PLAIN.withPads(0, 2, 0, 2).withGroup(4))); // 1-D depthwise
        ops.add(Op.conv(2, 8, 5, 6, 12, 1, 1, ConvWindow.PLAIN.withGroup(4)));
        ops.add(Op.conv(1, 4, 1, 37, 6, 1, 5, ConvWindow.PLAIN.withPads(0, 2, 0, 2))); // 1-D
        ops.add(Op.conv(1, 3, 23, 23, 8, 7, 7, ConvWindow.PLAIN.withStrides(4, 4).withPads(3, 3, 3, 3))); // a stem
        ops.add(Op.conv(1, 2, 3, 3, 5, 3, 3, ConvWindow.PLAIN)); // one output
        ops.add(Op.conv(1, 16, 7, 7, 9, 2, 2, ConvWindow.PLAIN.withStrides(2, 2))); // ConvNeXt's downsampling, odd size
        List<Op> all = new ArrayList<>();
        for (Op op : ops) {
            all.add(op);
            all.add(op.withEpilogue(Epilogue.of(Epilogue.Kind.BIAS), Epilogue.of(Epilogue.Kind.GELU_ERF)));
            all.add(op.withEpilogue(Epilogue.scale(0.5f), Epilogue.of(Epilogue.Kind.BIAS), Epilogue.of(Epilogue.Kind.RESIDUAL)));
        }
        return all;
    }

    static Stream<Arguments> cases() {
        List<Schedule> schedules = new ArrayList<>();
        for (int[] tile : new int[][] {{4, 1}, {8, 2}, {16, 1}, {12, 3}, {4, 4}}) {
            for (int unroll : new int[] {0, 3}) {
                schedules.add(new Schedule(tile[0], tile[1], 0, 0, 0, 0, true, unroll));
            }
        }
        return KernelCases.everyOpWithEverySchedule(convs(), schedules);
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("cases")
    void matchesTheDefinition(Op op, Schedule schedule) {
        KernelCases.assertMatchesSeeded(op, schedule, ConvKernelTest::inputs, ConvKernelTest::reference, TOLERANCE);
    }

    @Test
    void refusesSchedulesItCannotFollow() {
        Op op = Op.conv(1, 4, 8, 8, 4, 3, 3, ConvWindow.PLAIN);
        for (Schedule bad : List.of(new Schedule(20, 1, 0, 0, 0, 0, true, 0), new Schedule(4, 1, 0, 0, 0, 0, false, 0),
                new Schedule(4, 1, 0, 0, 0, 0, true, 0).withPackB(true), new Schedule(16, 8, 0, 0, 0, 0, true, 0))) {
            assertThrows(InvalidKernelException.class, () -> COMPILER.compile(op, bad), bad.toString());
        }
        assertTrue(assertThrows(InvalidKernelException.class, () -> Op.conv(1, 6, 8, 8, 4, 3, 3, ConvWindow.PLAIN.withGroup(4)))
                .getMessage().contains("groups"));
        assertTrue(assertThrows(InvalidKernelException.class, () -> Op.conv(1, 4, 2, 8, 4, 3, 3, ConvWindow.PLAIN))
                .getMessage().contains("does not fit"));
    }

    @Test
    void metadataNamesTheWindowAndTheScratch() {
        Op op = Op.conv(1, 4, 8, 8, 6, 3, 3, ConvWindow.PLAIN.withPads(1, 1, 1, 1).withStrides(2, 2).withGroup(2))
                .withEpilogue(Epilogue.of(Epilogue.Kind.BIAS));
        String meta = COMPILER.compile(op, new Schedule(4, 1, 0, 0, 0, 0, true, 0)).metadataJson();
        assertTrue(meta.contains("\"operands\":[\"A\",\"B\",\"C\",\"Work\",\"Bias\"]"), meta);
        assertTrue(meta.contains("\"operandShapes\":{\"A\":[1,4,8,8],\"B\":[6,2,3,3],\"C\":[1,6,4,4],\"Work\":[4,72],\"Bias\":[6]}"), meta);
        assertTrue(meta.contains("\"window\":{\"strides\":[2,2],\"dilations\":[1,1],\"pads\":[1,1,1,1],\"group\":2}"), meta);
        assertTrue(meta.contains("\"scratch\":[\"Work\"]"), meta);
    }

    static Map<String, Object> inputs(Op op, Random random) {
        List<Integer> d = op.dims();
        Map<String, Object> inputs = new HashMap<>();
        inputs.put("A", KernelCases.floats(random, d.get(0) * d.get(1) * d.get(2) * d.get(3)));
        inputs.put("B", KernelCases.floats(random, d.get(4) * d.get(1) / op.window().group() * d.get(5) * d.get(6)));
        if (op.fuses(Epilogue.Kind.BIAS)) {
            inputs.put("Bias", KernelCases.floats(random, d.get(4)));
        }
        if (op.fuses(Epilogue.Kind.RESIDUAL)) {
            inputs.put("Residual", KernelCases.floats(random, d.get(0) * d.get(4) * op.outputHeight() * op.outputWidth()));
        }
        return inputs;
    }

    /** ONNX's Conv by its definition, in double, then the epilogue (bias per output channel). */
    static double[] reference(Op op, Map<String, Object> inputs) {
        List<Integer> d = op.dims();
        int n = d.get(0), c = d.get(1), h = d.get(2), w = d.get(3), m = d.get(4), kh = d.get(5), kw = d.get(6);
        int oh = op.outputHeight(), ow = op.outputWidth();
        ConvWindow win = op.window();
        int cg = c / win.group(), mg = m / win.group();
        float[] x = (float[]) inputs.get("A"), weights = (float[]) inputs.get("B");
        float[] bias = (float[]) inputs.get("Bias"), residual = (float[]) inputs.get("Residual");
        double[] out = new double[n * m * oh * ow];
        for (int image = 0; image < n; image++) {
            for (int channel = 0; channel < m; channel++) {
                int g = channel / mg;
                for (int y = 0; y < oh; y++) {
                    for (int col = 0; col < ow; col++) {
                        double sum = 0;
                        for (int ci = 0; ci < cg; ci++) {
                            for (int i = 0; i < kh; i++) {
                                int iy = y * win.strideH() - win.padTop() + i * win.dilationH();
                                for (int j = 0; j < kw; j++) {
                                    int ix = col * win.strideW() - win.padLeft() + j * win.dilationW();
                                    if (iy >= 0 && iy < h && ix >= 0 && ix < w) {
                                        sum += (double) x[((image * c + g * cg + ci) * h + iy) * w + ix]
                                                * weights[((channel * cg + ci) * kh + i) * kw + j];
                                    }
                                }
                            }
                        }
                        int at = ((image * m + channel) * oh + y) * ow + col;
                        for (Epilogue e : op.epilogue()) {
                            sum = switch (e.kind()) {
                                case SCALE -> sum * e.value();
                                case BIAS -> sum + bias[channel];
                                case RESIDUAL -> sum + residual[at];
                                case GELU_ERF -> 0.5 * sum * (1 + ReferenceKernels.erf(sum / Math.sqrt(2)));
                                default -> throw new IllegalArgumentException(e.toString());
                            };
                        }
                        out[at] = sum;
                    }
                }
            }
        }
        return out;
    }
}
