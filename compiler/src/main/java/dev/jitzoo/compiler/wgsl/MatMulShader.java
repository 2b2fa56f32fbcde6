package dev.jitzoo.compiler.wgsl;

import static dev.jitzoo.compiler.wgsl.WgslSource.u;

import dev.jitzoo.compiler.kernel.Epilogue;
import dev.jitzoo.compiler.kernel.Op;
import dev.jitzoo.compiler.kernel.OpKind;
import dev.jitzoo.compiler.kernel.Schedule;
import dev.jitzoo.proto.rules.OpRules;
import java.util.ArrayList;
import java.util.List;

/**
 * Writes the WGSL of a (batch) matmul laid out by {@link MatMulLayout}: one invocation per
 * register tile, whose sums live in named locals ({@code c<row>_<column>}, vec4 along x when
 * vectorized); the k loop steps r0 x unroll at a time (all r0 steps' A and B values loaded, then
 * the multiply-adds), single steps after it for what is left of K; then the epilogue and the
 * guarded store. Rows and columns past the edge of C are clamped for loads (their sums are
 * discarded) and never stored, so every shape works and nothing outside C is written.
 */
final class MatMulShader {

    private final MatMulLayout layout;
    private final Op op;
    private final Schedule s;
    private final WgslSource out = new WgslSource();
    private final int lanes;
    /** Accumulators per tile row: vec4s when vectorized, else floats. */
    private final int columns;
    /** B is float16 (a matmul_f16's weights), read through b4 or b1. */
    private final boolean half;
    /** B is 4-bit in blocks of 32 along K with scales and zero points (a matmul_q4's), read through bq(k, n). */
    private final boolean q4;

    private MatMulShader(MatMulLayout layout) {
        this.layout = layout;
        this.op = layout.op();
        this.s = layout.schedule();
        this.lanes = layout.lanes();
        this.columns = s.x0() / lanes;
        this.half = op.kind() == OpKind.MATMUL_F16;
        this.q4 = op.kind() == OpKind.MATMUL_Q4;
    }

    static String write(MatMulLayout layout) {
        MatMulShader shader = new MatMulShader(layout);
        shader.module();
        return shader.out.toString();
    }

    private void module() {
        out.line("// jitzoo " + op.kind().abiName + " " + op.dims() + (op.transposeB() ? " transposeB" : "")
                + (op.broadcastB() ? " broadcastB" : "") + (op.epilogue().isEmpty() ? "" : " epilogue " + op.epilogue()));
        out.line("// register tile " + s.y0() + "x" + s.x0() + ", workgroup " + layout.threadsX() + "x" + layout.threadsY()
                + " covering " + layout.blockRows() + "x" + layout.blockColumns() + " of C"
                + (layout.staged() ? ", k tiles of " + layout.depth() + " staged in workgroup memory" : ""));
        out.line("const M = " + u(op.m()) + ";");
        out.line("const K = " + u(op.k()) + ";");
        out.line("const N = " + u(op.n()) + ";");
        String c = layout.vectorC() ? "vec4<f32>" : "f32";
        binding(0, "A", "read", "f32");
        binding(1, "B", "read", half ? (layout.vectorB() ? "vec2<u32>" : "u32") : q4 ? "u32" : layout.vectorB() ? "vec4<f32>" : "f32");
        int next = 2;
        if (q4) {
            binding(next++, "BScale", "read", "f32");
            binding(next++, "BZero", "read", "u32");
        }
        binding(next++, "C", "read_write", c);
        if (op.fuses(Epilogue.Kind.BIAS)) {
            binding(next++, "Bias", "read", c);
        }
        if (op.fuses(Epilogue.Kind.RESIDUAL)) {
            binding(next, "Residual", "read", c);
        }
        if (layout.staged()) {
            out.line("var<workgroup> As: array<f32, " + layout.blockRows() * layout.depth() + ">;");
            out.line("var<workgroup> Bs: array<" + (lanes == 4 ? "vec4<f32>" : "f32") + ", "
                    + layout.depth() * layout.blockColumns() / lanes + ">;");
        }
        out.blank();
        if (half) {
            out.line("// B holds float16 bits, two to a u32 (IEEE binary16, little-endian), widened to f32 as read");
            if (layout.vectorB()) {
                out.line("fn b4(i: u32) -> vec4<f32> { let w = B[i]; return vec4<f32>(unpack2x16float(w.x), unpack2x16float(w.y)); }");
            } else {
                out.line("fn b1(i: u32) -> f32 { return unpack2x16float(B[i / 2u])[i % 2u]; }");
            }
            out.blank();
        }
        if (q4) {
            q4Helper();
        }
        WgslMath.activationFunctions(out, op, layout.vectorC());
        out.line("@compute @workgroup_size(" + layout.threadsX() + ", " + layout.threadsY() + ", 1)");
        out.open("fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>,"
                + " @builtin(local_invocation_index) li: u32)");
        out.line("let row0 = wg.y * " + u(layout.blockRows()) + " + lid.y * " + u(s.y0()) + ";");
        out.line("let col0 = wg.x * " + u(layout.blockColumns()) + " + lid.x * " + u(s.x0()) + ";");
        if (op.batch() > 1) {
            out.line("let aBase = wg.z * " + u((long) op.m() * op.k()) + ";");
            out.line("let bBase = " + (op.broadcastB() ? "0u" : "wg.z * " + u((long) op.k() * op.n())) + ";");
            out.line("let cBase = wg.z * " + u((long) op.m() * op.n()) + ";");
        }
        String zero = lanes == 4 ? "vec4<f32>()" : "0.0f";
        for (int i = 0; i < s.y0(); i++) {
            StringBuilder line = out.begin().append("var ");
            for (int v = 0; v < columns; v++) {
                line.append(v == 0 ? "" : "; var ").append(acc(i, v)).append(" = ").append(zero);
            }
            line.append(';');
            out.end();
        }
        if (layout.staged()) {
            stagedReduction();
        } else {
            directReduction();
        }
        store();
        out.close();
    }

    private void binding(int index, String name, String access, String element) {
        out.line("@group(0) @binding(" + index + ") var<storage, " + access + "> " + name + ": array<" + element + ">;");
    }

    // ---- reduction from storage (no cache_read) ----

    private void directReduction() {
        boolean clampRows = layout.rowOverhang(), clampColumns = layout.columnOverhang();
        for (int i = 0; i < s.y0(); i++) {
            String row = clampRows ? "min(row0 + " + u(i) + ", M - 1u)" : "(row0 + " + u(i) + ")";
            out.line("let ar" + i + " = " + base("aBase") + row + " * K;");
        }
        if (layout.vectorB()) {
            for (int v = 0; v < columns; v++) {
                String column = "col0 / 4u + " + u(v);
                out.line("let bc" + v + " = " + (clampColumns ? "min(" + column + ", N / 4u - 1u)" : column) + ";");
            }
            if (op.batch() > 1) {
                out.line("let bBase4 = bBase / 4u;");
            }
        } else {
            for (int j = 0; j < s.x0(); j++) {
                String column = clampColumns ? "min(col0 + " + u(j) + ", N - 1u)" : "(col0 + " + u(j) + ")";
                out.line("let bc" + j + " = " + (op.transposeB() ? base("bBase") + column + " * K" : column) + ";");
            }
        }
        kLoop(op.k(), "k", this::directStep);
    }

    /** Loads of one register step at k offset {@code k}: {@code a<d>_<i>}, {@code b<d>_<v>}. */
    private void directStep(String k, int d) {
        String kd = d == 0 ? k : k + " + " + u(d);
        for (int i = 0; i < s.y0(); i++) {
            out.line("let a" + d + "_" + i + " = A[ar" + i + " + " + kd + "];");
        }
        if (layout.vectorB()) {
            String row = (op.batch() > 1 ? "bBase4 + " : "") + "(" + kd + ") * " + u(op.n() / 4);
            for (int v = 0; v < columns; v++) {
                out.line("let b" + d + "_" + v + " = " + b(row + " + bc" + v) + ";");
            }
            return;
        }
        if (!op.transposeB() && !q4) {
            out.line("let br" + d + " = " + base("bBase") + "(" + kd + ") * N;");
        }
        for (int v = 0; v < columns; v++) {
            StringBuilder line = out.begin().append("let b").append(d).append('_').append(v).append(" = ");
            if (lanes == 4) {
                line.append("vec4<f32>(");
            }
            for (int l = 0; l < lanes; l++) {
                int j = v * lanes + l;
                line.append(l == 0 ? "" : ", ").append(q4 ? "bq(" + kd + ", bc" + j + ")"
                        : b(op.transposeB() ? "bc" + j + " + " + kd : "br" + d + " + bc" + j));
            }
            line.append(lanes == 4 ? ");" : ";");
            out.end();
        }
    }

    // ---- reduction over tiles staged in workgroup memory (cache_read) ----

    private void stagedReduction() {
        int depth = layout.depth(), rows = layout.blockRows(), width = layout.blockColumns() / lanes;
        for (int i = 0; i < s.y0(); i++) {
            out.line("let ar" + i + " = (lid.y * " + u(s.y0()) + " + " + u(i) + ") * " + u(depth) + ";");
        }
        for (int v = 0; v < columns; v++) {
            out.line("let bc" + v + " = lid.x * " + u(columns) + " + " + u(v) + ";");
        }
        if (layout.vectorB() && op.batch() > 1) {
            out.line("let bBase4 = bBase / 4u;");
        }
        out.open("for (var t = 0u; t < " + u(layout.kTiles()) + "; t++)");
        out.line("let k0 = t * " + u(depth) + ";");
        boolean kEdge = op.k() % depth != 0;
        // A: rows x depth floats, row-major
        cooperative(rows * depth, () -> {
            out.line("let r = idx / " + u(depth) + ";");
            out.line("let kk = idx % " + u(depth) + ";");
            out.line("let gr = wg.y * " + u(rows) + " + r;");
            out.line("let gk = k0 + kk;");
            String row = layout.rowOverhang() ? "min(gr, M - 1u)" : "gr";
            String col = kEdge ? "min(gk, K - 1u)" : "gk";
            String load = "A[" + base("aBase") + row + " * K + " + col + "]";
            out.line("As[idx] = " + guarded(load, "0.0f", conditions(layout.rowOverhang() ? "gr < M" : null,
                    kEdge ? "gk < K" : null)) + ";");
        });
        // B: depth x (block columns / lanes) elements, row-major
        cooperative(depth * width, () -> {
            out.line("let kk = idx / " + u(width) + ";");
            out.line("let gc = wg.x * " + u(layout.blockColumns()) + " + (idx % " + u(width) + ")"
                    + (lanes == 4 ? " * 4u" : "") + ";");
            out.line("let gk = k0 + kk;");
            String k = kEdge ? "min(gk, K - 1u)" : "gk";
            String kCondition = kEdge ? "gk < K" : null;
            if (layout.vectorB()) {
                String column = layout.columnOverhang() ? "min(gc / 4u, N / 4u - 1u)" : "gc / 4u";
                String load = b((op.batch() > 1 ? "bBase4 + " : "") + k + " * " + u(op.n() / 4) + " + " + column);
                out.line("Bs[idx] = " + guarded(load, "vec4<f32>()",
                        conditions(kCondition, layout.columnOverhang() ? "gc < N" : null)) + ";");
                return;
            }
            StringBuilder value = new StringBuilder(lanes == 4 ? "vec4<f32>(" : "");
            for (int l = 0; l < lanes; l++) {
                String gc = l == 0 ? "gc" : "(gc + " + u(l) + ")";
                String column = layout.columnOverhang() ? "min(" + gc + ", N - 1u)" : gc;
                String load = q4 ? "bq(" + k + ", " + column + ")"
                        : b(op.transposeB() ? base("bBase") + column + " * K + " + k : base("bBase") + k + " * N + " + column);
                value.append(l == 0 ? "" : ", ").append(guarded(load, "0.0f",
                        conditions(kCondition, layout.columnOverhang() ? gc + " < N" : null)));
            }
            out.line("Bs[idx] = " + value + (lanes == 4 ? ")" : "") + ";");
        });
        out.line("workgroupBarrier();");
        kLoop(depth, "kk", this::stagedStep);
        out.line("workgroupBarrier();");
        out.close();
    }

    /** {@code body} for every {@code idx} below {@code size}, the workgroup's invocations sharing them out. */
    private void cooperative(int size, Runnable body) {
        int threads = layout.invocations();
        int rounds = MatMulLayout.ceilDiv(size, threads);
        out.open(rounds == 1 ? "" : "for (var e = 0u; e < " + u(rounds) + "; e++)");
        out.line("let idx = li" + (rounds == 1 ? "" : " + e * " + u(threads)) + ";");
        if (size % threads != 0) {
            out.open("if (idx < " + u(size) + ")");
        }
        body.run();
        if (size % threads != 0) {
            out.close();
        }
        out.close();
    }

    private void stagedStep(String k, int d) {
        String kd = d == 0 ? k : k + " + " + u(d);
        int width = layout.blockColumns() / lanes;
        for (int i = 0; i < s.y0(); i++) {
            out.line("let a" + d + "_" + i + " = As[ar" + i + " + " + kd + "];");
        }
        out.line("let br" + d + " = (" + kd + ") * " + u(width) + ";");
        for (int v = 0; v < columns; v++) {
            out.line("let b" + d + "_" + v + " = Bs[br" + d + " + bc" + v + "];");
        }
    }

    // ---- the k loop ----

    interface Step {
        /** Writes the loads of register step {@code d} (0 .. r0-1) at k offset {@code k}. */
        void loads(String k, int d);
    }

    /**
     * k from 0 to {@code extent}: trips of unroll copies of r0 steps, each copy in a block of its
     * own (loads, then multiply-adds), then single steps for the remainder.
     */
    private void kLoop(int extent, String k, Step step) {
        int steps = layout.steps(), copies = layout.copies(), stride = steps * copies;
        int whole = extent / stride * stride;
        if (whole > 0) {
            out.open("for (var " + k + " = 0u; " + k + " < " + u(whole) + "; " + k + " += " + u(stride) + ")");
            for (int copy = 0; copy < copies; copy++) {
                String at = copy == 0 ? k : k + " + " + u((long) copy * steps);
                out.open("");
                for (int d = 0; d < steps; d++) {
                    step.loads(at, d);
                }
                for (int d = 0; d < steps; d++) {
                    madds(d);
                }
                out.close();
            }
            out.close();
        }
        if (whole < extent) {
            out.open("for (var " + k + " = " + u(whole) + "; " + k + " < " + u(extent) + "; " + k + "++)");
            step.loads(k, 0);
            madds(0);
            out.close();
        }
    }

    private void madds(int d) {
        for (int i = 0; i < s.y0(); i++) {
            for (int v = 0; v < columns; v++) {
                String c = acc(i, v);
                StringBuilder line = out.begin();
                line.append(c).append(" += a").append(d).append('_').append(i).append(" * b").append(d).append('_')
                        .append(v).append(';');
                out.end();
            }
        }
    }

    // ---- epilogue and store ----

    private void store() {
        String cBase = base("cBase");
        for (int i = 0; i < s.y0(); i++) {
            out.open("");
            out.line("let row = row0 + " + u(i) + ";");
            if (layout.rowOverhang()) {
                out.open("if (row < M)");
            }
            out.line("let cr = " + cBase + "row * N;");
            for (int v = 0; v < columns; v++) {
                if (layout.vectorC()) {
                    storeOne("col0 + " + u(v * 4L), acc(i, v), true);
                } else {
                    for (int l = 0; l < lanes; l++) {
                        int j = v * lanes + l;
                        storeOne(j == 0 ? "col0" : "col0 + " + u(j), acc(i, v) + (lanes == 4 ? "[" + l + "]" : ""), false);
                    }
                }
            }
            if (layout.rowOverhang()) {
                out.close();
            }
            out.close();
        }
    }

    private void storeOne(String column, String value, boolean vector) {
        String guard = layout.columnOverhang() ? "if (" + column + " < N)" : "";
        out.open(guard);
        out.line("let col = " + column + ";");
        String index = vector ? "(cr + col) / 4u" : "cr + col";
        if (op.epilogue().isEmpty()) {
            out.line("C[" + index + "] = " + value + ";");
        } else {
            out.line("var o = " + value + ";");
            WgslMath.epilogue(out, op, "o", vector, "Bias[" + (vector ? "col / 4u" : "col") + "]", "Residual[" + index + "]");
            out.line("C[" + index + "] = o;");
        }
        out.close();
    }

    // ---- helpers ----

    /**
     * {@code bq(k, n)}: weight (k, n) of a 4-bit B as onnxruntime dequantizes it, (q − zero) × scale:
     * B is {@code [N, blocks, 16]} bytes (byte i of a block holds k = 2i in its low nibble, 2i + 1 in
     * its high one), BScale {@code [N, blocks]}, BZero {@code [N, ceil(blocks / 2)]} bytes (the even
     * block in the low nibble); bytes read out of their u32 words.
     */
    private void q4Helper() {
        long blocks = OpRules.q4Blocks(op.k());
        out.line("// B holds 4-bit weights in blocks of 32 along K, a scale and a 4-bit zero point each, widened as read");
        out.line("const BLOCKS = " + u(blocks) + ";");
        out.line("const ZERO_BYTES = " + u((blocks + 1) / 2) + ";");
        out.open("fn bq(k: u32, n: u32) -> f32");
        out.line("let block = k / 32u;");
        out.line("let byte = (n * BLOCKS + block) * 16u + (k % 32u) / 2u;");
        out.line("let q = (B[byte / 4u] >> ((byte % 4u) * 8u + (k % 2u) * 4u)) & 15u;");
        out.line("let zeroByte = n * ZERO_BYTES + block / 2u;");
        out.line("let zero = (BZero[zeroByte / 4u] >> ((zeroByte % 4u) * 8u + (block % 2u) * 4u)) & 15u;");
        out.line("return (f32(q) - f32(zero)) * BScale[n * BLOCKS + block];");
        out.close();
        out.blank();
    }

    /** B's element (a vec4 when B is read as vec4) at {@code index}: float16 bits widened for a matmul_f16. */
    private String b(String index) {
        return (half ? (layout.vectorB() ? "b4(" : "b1(") : "B[") + index + (half ? ")" : "]");
    }

    private static String acc(int row, int column) {
        return "c" + row + "_" + column;
    }

    /** {@code "aBase + "} for a batch matmul with more than one batch, else nothing. */
    private String base(String name) {
        return op.batch() > 1 ? name + " + " : "";
    }

    private static List<String> conditions(String... conditions) {
        List<String> list = new ArrayList<>(2);
        for (String c : conditions) {
            if (c != null) {
                list.add(c);
            }
        }
        return list;
    }

    /** {@code load} where every condition holds, else {@code zero}; the load's indices are clamped, so always in bounds. */
    private static String guarded(String load, String zero, List<String> conditions) {
        return conditions.isEmpty() ? load : "select(" + zero + ", " + load + ", " + String.join(" && ", conditions) + ")";
    }
}
