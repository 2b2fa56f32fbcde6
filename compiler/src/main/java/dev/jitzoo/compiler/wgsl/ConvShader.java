package dev.jitzoo.compiler.wgsl;

import static dev.jitzoo.compiler.wgsl.WgslSource.u;

import dev.jitzoo.compiler.kernel.ConvShape;
import dev.jitzoo.compiler.kernel.ConvWindow;
import dev.jitzoo.compiler.kernel.Epilogue;
import dev.jitzoo.compiler.kernel.InvalidKernelException;
import dev.jitzoo.compiler.kernel.Op;
import dev.jitzoo.compiler.kernel.Schedule;
import dev.jitzoo.proto.rules.ScheduleRules;

/**
 * Writes the WGSL of a convolution, direct: one invocation computes a register tile of y0 output
 * channels (of one group) by x0 outputs along one output row, its sums in named locals
 * ({@code s<channel>_<output>}); per input channel and window tap it reads the x0 inputs under the
 * tile once (0 over the padding) and the y0 filter values, then the multiply-adds. The workgroup is
 * {@code x1/x0} tiles along a row by {@code y1} output rows (0: 8 and 8, fewer when the shape needs
 * fewer); the grid's z runs over the groups' channel tiles. Channels and outputs past the edge are
 * clamped for loads (their sums are discarded) and never stored.
 */
final class ConvShader {

    /** Invocations along each axis of a workgroup when x1 or y1 is 0. */
    static final int DEFAULT_THREADS = 8;
    private final Op op;
    private final Schedule s;
    private final WgslSource out = new WgslSource();
    private final ConvWindow w;
    private final ConvShape shape;

    private ConvShader(Op op, Schedule s) {
        this.op = op;
        this.s = s;
        this.w = op.window();
        this.shape = ConvShape.of(op);
    }

    static Shader write(Op op, Schedule s, WgslLimits limits) {
        InvalidKernelException.refuse(op, s, ScheduleRules.wgslConvProblem(s.wire()));
        ConvShader shader = new ConvShader(op, s);
        ConvShape g = shader.shape;
        long operand = Math.max((long) g.n() * g.channels() * g.height() * g.width(), (long) g.n() * g.outChannels() * g.outH() * g.outW())
                * MatMulLayout.FLOAT_BYTES;
        if (operand > limits.maxStorageBufferBindingSize()) {
            throw new InvalidKernelException("an operand of " + operand + " bytes exceeds maxStorageBufferBindingSize "
                    + limits.maxStorageBufferBindingSize());
        }
        return shader.module(limits);
    }

    private Shader module(WgslLimits limits) {
        int x0 = s.x0(), y0 = s.y0();
        int tilesPerRow = MatMulLayout.ceilDiv(shape.outW(), x0), rows = op.dims().get(0) * shape.outH();
        int wx = Math.min(s.x1() == 0 ? DEFAULT_THREADS : s.x1() / x0, MatMulLayout.powerOfTwoAtLeast(tilesPerRow));
        int wy = Math.min(s.y1() == 0 ? DEFAULT_THREADS : s.y1(), MatMulLayout.powerOfTwoAtLeast(rows));
        if ((long) wx * wy > limits.maxComputeInvocationsPerWorkgroup() || wx > limits.maxComputeWorkgroupSizeX()
                || wy > limits.maxComputeWorkgroupSizeY()) {
            throw new InvalidKernelException("a workgroup of " + wx + "x" + wy + " invocations exceeds the device's limits");
        }
        int channelTiles = MatMulLayout.ceilDiv(shape.groupOutChannels(), y0);
        int[] grid = {MatMulLayout.ceilDiv(tilesPerRow, wx), MatMulLayout.ceilDiv(rows, wy), w.group() * channelTiles};
        for (int g : grid) {
            if (g > limits.maxComputeWorkgroupsPerDimension()) {
                throw new InvalidKernelException("conv over " + op.dims() + " needs a grid of " + grid[0] + "x" + grid[1] + "x" + grid[2]
                        + " workgroups, more than maxComputeWorkgroupsPerDimension (" + limits.maxComputeWorkgroupsPerDimension() + ")");
            }
        }
        out.line("// jitzoo conv " + op.dims() + " " + w + (op.epilogue().isEmpty() ? "" : " epilogue " + op.epilogue())
                + "; tile " + y0 + "x" + x0 + ", workgroup " + wx + "x" + wy + ", dispatch " + grid[0] + "x" + grid[1] + "x" + grid[2]);
        out.line("@group(0) @binding(0) var<storage, read> A: array<f32>;");
        out.line("@group(0) @binding(1) var<storage, read> B: array<f32>;");
        out.line("@group(0) @binding(2) var<storage, read_write> C: array<f32>;");
        int next = 3;
        if (op.fuses(Epilogue.Kind.BIAS)) {
            out.line("@group(0) @binding(" + next++ + ") var<storage, read> Bias: array<f32>;");
        }
        if (op.fuses(Epilogue.Kind.RESIDUAL)) {
            out.line("@group(0) @binding(" + next + ") var<storage, read> Residual: array<f32>;");
        }
        out.blank();
        WgslMath.activationFunctions(out, op, false);
        out.line("@compute @workgroup_size(" + wx + ", " + wy + ", 1)");
        out.open("fn main(@builtin(global_invocation_id) gid: vec3<u32>)");
        out.line("let col0 = gid.x * " + u(x0) + ";");
        out.line("let row = gid.y;");
        out.open("if (col0 >= " + u(shape.outW()) + " || row >= " + u(rows) + ")").line("return;").close();
        out.line("let n = row / " + u(shape.outH()) + ";");
        out.line("let y = row % " + u(shape.outH()) + ";");
        out.line("let g = gid.z / " + u(channelTiles) + ";");
        out.line("let m0 = g * " + u(shape.groupOutChannels()) + " + gid.z % " + u(channelTiles) + " * " + u(y0) + ";");
        out.line("let mEnd = g * " + u(shape.groupOutChannels()) + " + " + u(shape.groupOutChannels()) + ";");
        for (int r = 0; r < y0; r++) {
            // a channel past the group's end reads the last one's filter (its sums are not stored)
            out.line("let w" + r + " = min(m0 + " + u(r) + ", mEnd - 1u) * " + u(shape.taps()) + ";");
            for (int t = 0; t < x0; t++) {
                out.line("var s" + r + "_" + t + " = 0.0f;");
            }
        }
        out.open("for (var c = 0u; c < " + u(shape.groupChannels()) + "; c++)");
        out.line("let plane = (n * " + u(shape.channels()) + " + g * " + u(shape.groupChannels()) + " + c) * " + u(shape.plane()) + ";");
        out.open("for (var i = 0u; i < " + u(shape.kernelH()) + "; i++)");
        out.line("let iy = i32(y * " + u(w.strideH()) + " + i * " + u(w.dilationH()) + ") - " + w.padTop() + ";");
        out.open("if (iy < 0 || iy >= " + shape.height() + ")").line("continue;").close();
        out.line("let inRow = plane + u32(iy) * " + u(shape.width()) + ";");
        out.open("for (var j = 0u; j < " + u(shape.kernelW()) + "; j++)");
        out.line("let ix = i32(col0 * " + u(w.strideW()) + " + j * " + u(w.dilationW()) + ") - " + w.padLeft() + ";");
        out.line("let tap = (c * " + u(shape.kernelH()) + " + i) * " + u(shape.kernelW()) + " + j;");
        for (int t = 0; t < x0; t++) {
            String at = "ix" + (t == 0 ? "" : " + " + (t * w.strideW()));
            out.line("let x" + t + " = select(0.0f, A[inRow + u32(clamp(" + at + ", 0, " + (shape.width() - 1) + "))], " + at + " >= 0 && "
                    + at + " < " + shape.width() + ");");
        }
        for (int r = 0; r < y0; r++) {
            out.line("let f" + r + " = B[w" + r + " + tap];");
            for (int t = 0; t < x0; t++) {
                out.line("s" + r + "_" + t + " = s" + r + "_" + t + " + f" + r + " * x" + t + ";");
            }
        }
        out.close().close().close();
        for (int r = 0; r < y0; r++) {
            out.open("if (m0 + " + u(r) + " < mEnd)");
            out.line("let m = m0 + " + u(r) + ";");
            out.line("let base = (n * " + u(shape.outChannels()) + " + m) * " + u(shape.outPlane()) + " + y * " + u(shape.outW())
                    + " + col0;");
            for (int t = 0; t < x0; t++) {
                out.open("if (col0 + " + u(t) + " < " + u(shape.outW()) + ")");
                out.line("var o = s" + r + "_" + t + ";");
                WgslMath.epilogue(out, op, "o", false, "Bias[m]", "Residual[base + " + u(t) + "]");
                out.line("C[base + " + u(t) + "] = o;");
                out.close();
            }
            out.close();
        }
        out.close();
        return new Shader(out.toString(), new int[] {wx, wy, 1}, grid, 0);
    }
}
