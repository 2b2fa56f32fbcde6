package dev.jitzoo.compiler.wgsl;

import static dev.jitzoo.compiler.wgsl.WgslSource.f;
import static dev.jitzoo.compiler.wgsl.WgslSource.u;

import dev.jitzoo.compiler.kernel.InvalidKernelException;
import dev.jitzoo.compiler.kernel.Op;
import dev.jitzoo.compiler.kernel.OpKind;
import dev.jitzoo.compiler.kernel.Schedule;

/**
 * Writes the WGSL of the element-wise and row ops, scheduled by {@code vectorize} and
 * {@code unroll} only.
 *
 * <ul>
 *   <li>{@code add}, {@code mul}: each invocation handles {@code unroll} units (0 means 1), one
 *       workgroup size apart so that neighbours read neighbours; a unit is a vec4 when vectorized
 *       and n is a multiple of 4, else a float (vectorized with n not a multiple of 4: 4 x unroll
 *       floats per invocation, the same coverage).</li>
 *   <li>{@code softmax}, {@code layer_norm}: one workgroup per row; its invocations stride over the
 *       row ({@code unroll} units per trip), each keeps a partial max or sum, and a tree reduction in
 *       workgroup memory combines them. Units are vec4 when vectorized and cols is a multiple of 4.</li>
 * </ul>
 * Grids over 65535 workgroups (the limit per dimension) spread over y; workgroups past the end do nothing.
 */
final class RowOpShader {

    /** Invocations per workgroup, fewer when the op has fewer units. */
    static final int WORKGROUP = 64;

    private final Op op;
    private final Schedule s;
    private final WgslLimits limits;
    private final WgslSource out = new WgslSource();

    private RowOpShader(Op op, Schedule s, WgslLimits limits) {
        this.op = op;
        this.s = s;
        this.limits = limits;
    }

    static Shader write(Op op, Schedule s, WgslLimits limits) {
        s.checkRowOp(op);
        long floats = op.kind() == OpKind.ADD || op.kind() == OpKind.MUL ? op.dims().get(0) : (long) op.rows() * op.cols();
        if (floats * MatMulLayout.FLOAT_BYTES > limits.maxStorageBufferBindingSize()) {
            throw new InvalidKernelException("an operand of " + floats * MatMulLayout.FLOAT_BYTES + " bytes exceeds "
                    + "maxStorageBufferBindingSize " + limits.maxStorageBufferBindingSize());
        }
        RowOpShader shader = new RowOpShader(op, s, limits);
        return op.kind() == OpKind.ADD || op.kind() == OpKind.MUL ? shader.elementwise() : shader.rows();
    }

    // ---- add, mul ----

    private Shader elementwise() {
        int n = op.dims().get(0);
        boolean vector = s.vectorize() && n % 4 == 0;
        int units = vector ? n / 4 : n;
        int perInvocation = Math.max(1, s.unroll()) * (s.vectorize() && !vector ? 4 : 1);
        int threads = Math.min(workgroupCap(), MatMulLayout.powerOfTwoAtLeast(MatMulLayout.ceilDiv(units, perInvocation)));
        int[] grid = grid(MatMulLayout.ceilDiv(units, threads * perInvocation), "elements");
        String type = vector ? "vec4<f32>" : "f32";
        header(new int[] {threads, 1, 1}, grid);
        out.line("const UNITS = " + u(units) + ";");
        out.line("@group(0) @binding(0) var<storage, read> A: array<" + type + ">;");
        out.line("@group(0) @binding(1) var<storage, read> B: array<" + type + ">;");
        out.line("@group(0) @binding(2) var<storage, read_write> C: array<" + type + ">;");
        out.blank();
        entry(threads);
        out.line("let first = (wg.y * " + u(grid[0]) + " + wg.x) * " + u((long) threads * perInvocation) + " + li;");
        boolean guard = (long) grid[0] * grid[1] * threads * perInvocation != units;
        String operator = op.kind() == OpKind.ADD ? " + " : " * ";
        for (int p = 0; p < perInvocation; p++) {
            out.open("");
            out.line("let i = first" + (p == 0 ? "" : " + " + u((long) p * threads)) + ";");
            if (guard) {
                out.open("if (i < UNITS)");
            }
            out.line("C[i] = A[i]" + operator + "B[i];");
            if (guard) {
                out.close();
            }
            out.close();
        }
        out.close();
        return new Shader(out.toString(), new int[] {threads, 1, 1}, grid, 0);
    }

    // ---- softmax, layer_norm ----

    private Shader rows() {
        boolean vector = s.vectorize() && op.cols() % 4 == 0;
        int units = vector ? op.cols() / 4 : op.cols();
        int threads = Math.min(Integer.highestOneBit(workgroupCap()), MatMulLayout.powerOfTwoAtLeast(units));
        int storage = 2 * threads * MatMulLayout.FLOAT_BYTES;
        if (storage > limits.maxComputeWorkgroupStorageSize()) {
            throw new InvalidKernelException("the row reduction needs " + storage + " bytes of workgroup memory, over "
                    + "maxComputeWorkgroupStorageSize " + limits.maxComputeWorkgroupStorageSize());
        }
        int[] grid = grid(op.rows(), "rows");
        String type = vector ? "vec4<f32>" : "f32";
        header(new int[] {threads, 1, 1}, grid);
        out.line("const UNITS = " + u(units) + ";");
        out.line("@group(0) @binding(0) var<storage, read> A: array<" + type + ">;");
        boolean norm = op.kind() == OpKind.LAYER_NORM;
        if (norm) {
            out.line("@group(0) @binding(1) var<storage, read> Gamma: array<" + type + ">;");
            out.line("@group(0) @binding(2) var<storage, read> Beta: array<" + type + ">;");
        }
        out.line("@group(0) @binding(" + (norm ? 3 : 1) + ") var<storage, read_write> C: array<" + type + ">;");
        out.line("var<workgroup> red0: array<f32, " + threads + ">;");
        out.line("var<workgroup> red1: array<f32, " + threads + ">;");
        out.blank();
        if (!norm) {
            WgslMath.expFunction(out, vector);
        }
        entry(threads);
        out.line("let row = wg.y * " + u(grid[0]) + " + wg.x;");
        if ((long) grid[0] * grid[1] != op.rows()) {
            out.open("if (row >= " + u(op.rows()) + ")");
            out.line("return;");
            out.close();
        }
        out.line("let base = row * UNITS;");
        String zero = vector ? "vec4<f32>()" : "0.0f";
        if (norm) {
            float perCol = 1f / op.cols();
            out.line("var sum = " + zero + ";");
            overRow(threads, units, "sum += A[base + u];");
            reduce("red0", horizontal("sum", vector, "+"), "+", threads);
            out.line("let mean = red0[0] * " + f(perCol) + ";");
            out.line("var squares = " + zero + ";");
            overRow(threads, units, "let d = A[base + u] - mean; squares += d * d;");
            reduce("red1", horizontal("squares", vector, "+"), "+", threads);
            out.line("let scale = 1.0f / sqrt(red1[0] * " + f(perCol) + " + " + f(op.layerNormEpsilon()) + ");");
            overRow(threads, units, "C[base + u] = (A[base + u] - mean) * scale * Gamma[u] + Beta[u];");
        } else {
            out.line("var top = " + (vector ? "vec4<f32>(" + f(WgslMath.LOWEST) + ")" : f(WgslMath.LOWEST)) + ";");
            overRow(threads, units, "top = max(top, A[base + u]);");
            reduce("red0", horizontal("top", vector, "max"), "max", threads);
            out.line("let rowMax = red0[0];");
            out.line("var sum = " + zero + ";");
            overRow(threads, units, "let e = exp" + WgslMath.suffix(vector) + "(A[base + u] - rowMax); C[base + u] = e; sum += e;");
            reduce("red1", horizontal("sum", vector, "+"), "+", threads);
            out.line("let inverse = 1.0f / red1[0];");
            overRow(threads, units, "C[base + u] = C[base + u] * inverse;");
        }
        out.close();
        return new Shader(out.toString(), new int[] {threads, 1, 1}, grid, storage);
    }

    /** {@code body} (which reads {@code u}) for this invocation's units of the row: one workgroup apart, unroll per trip. */
    private void overRow(int threads, int units, String body) {
        int copies = Math.max(1, s.unroll());
        long stride = (long) threads * copies;
        out.open("for (var u0 = li; u0 < UNITS; u0 += " + u(stride) + ")");
        boolean guard = units % stride != 0;
        for (int copy = 0; copy < copies; copy++) {
            out.open("");
            out.line("let u = u0" + (copy == 0 ? "" : " + " + u((long) copy * threads)) + ";");
            if (copy > 0 && guard) {
                out.open("if (u < UNITS)");
            }
            out.line(body);
            if (copy > 0 && guard) {
                out.close();
            }
            out.close();
        }
        out.close();
    }

    /** Writes {@code partial} to {@code shared[li]} and combines the workgroup's partials into {@code shared[0]}. */
    private void reduce(String shared, String partial, String op, int threads) {
        out.line(shared + "[li] = " + partial + ";");
        out.line("workgroupBarrier();");
        for (int half = threads / 2; half >= 1; half /= 2) {
            out.open("if (li < " + u(half) + ")");
            out.line(shared + "[li] = " + combine(shared + "[li]", shared + "[li + " + u(half) + "]", op) + ";");
            out.close();
            out.line("workgroupBarrier();");
        }
    }

    private static String horizontal(String value, boolean vector, String op) {
        if (!vector) {
            return value;
        }
        return combine(combine(value + ".x", value + ".y", op), combine(value + ".z", value + ".w", op), op);
    }

    private static String combine(String a, String b, String op) {
        return op.equals("max") ? "max(" + a + ", " + b + ")" : "(" + a + " " + op + " " + b + ")";
    }

    // ---- shared ----

    private void header(int[] workgroup, int[] grid) {
        out.line("// jitzoo " + op.kind().abiName + " " + op.dims() + ", vectorize " + s.vectorize() + ", unroll "
                + s.unroll() + "; workgroup " + workgroup[0] + ", dispatch " + grid[0] + "x" + grid[1]);
    }

    private void entry(int threads) {
        out.line("@compute @workgroup_size(" + threads + ", 1, 1)");
        out.open("fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) li: u32)");
    }

    private int workgroupCap() {
        return Math.min(WORKGROUP, Math.min(limits.maxComputeInvocationsPerWorkgroup(), limits.maxComputeWorkgroupSizeX()));
    }

    /** {@code count} workgroups as an x by y grid: along x up to the limit, the rest along y. */
    private int[] grid(int count, String what) {
        int max = limits.maxComputeWorkgroupsPerDimension();
        int y = MatMulLayout.ceilDiv(count, max);
        if (y > max) {
            throw new InvalidKernelException(op.kind().abiName + " over " + op.dims() + " needs " + count
                    + " workgroups, more than maxComputeWorkgroupsPerDimension² (" + max + "²) can dispatch for its " + what);
        }
        return new int[] {MatMulLayout.ceilDiv(count, y), y, 1};
    }
}
