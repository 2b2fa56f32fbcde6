package dev.jitzoo.compiler.kernel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.jitzoo.compiler.wasm.Listing;
import dev.jitzoo.compiler.wasm.passes.Pass;
import dev.jitzoo.compiler.wgsl.WgslCompiler;
import io.github.kawamuray.wasmtime.Engine;
import io.github.kawamuray.wasmtime.Module;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Golden kernels, as compiler projects keep them: the SHA-256 of every kernel of a fixed set, per
 * backend, stored for the emitter revision that made them ({@code golden/wasm-r5.sha256}), and one
 * readable listing compared line by line. Bytes that change without a bump of the backend's
 * {@code EMITTER_REVISION} fail here, since caches keyed by kernel id and revision would serve
 * stale kernels. After a deliberate change: bump the revision, then write the new files with
 * {@code ./mvnw -pl compiler test -Dtest=GoldenKernelsTest -Djitzoo.golden.update=true}
 * and review their diff. The files were written on JDK 17, what CI runs: WGSL literals and the
 * listing print floats with {@code Float.toString}, which prints some values with fewer digits
 * from JDK 19 on, so a newer JDK reads them as changed.
 */
class GoldenKernelsTest {

    private static final Path GOLDEN = Path.of("src/test/resources/golden");
    private static final boolean UPDATE = Boolean.getBoolean("jitzoo.golden.update");
    private static final Schedule ROW_VECTOR = new Schedule(0, 0, 0, 0, 0, 0, true, 0);

    @Test
    void wasmKernelsAreTheBytesOfTheirEmitterRevision() throws IOException {
        WasmCompiler wasm = new WasmCompiler();
        checkHashes("wasm-r" + WasmCompiler.EMITTER_REVISION + ".sha256", "WasmCompiler", wasmSet(), wasm::compile);
    }

    @Test
    void wgslKernelsAreTheSourcesOfTheirEmitterRevision() throws IOException {
        WgslCompiler wgsl = new WgslCompiler();
        checkHashes("wgsl-r" + WgslCompiler.EMITTER_REVISION + ".sha256", "WgslCompiler", wgslSet(), wgsl::compile);
    }

    @Test
    void aSmallKernelReadsAsItsGoldenListing() throws IOException {
        Op op = Op.matmul(8, 16, 8).withEpilogue(Epilogue.of(Epilogue.Kind.BIAS));
        StringBuilder text = new StringBuilder();
        WasmCompiler.lower(op, Schedule.registerTile(2, 8, true, 0), Pass.ALL)
                .forEach(f -> text.append(Listing.of(f.name(), f.function())));
        Path file = GOLDEN.resolve("wasm-r" + WasmCompiler.EMITTER_REVISION + "-matmul-8x16x8-bias.lst");
        if (UPDATE) {
            Files.writeString(file, text);
        }
        if (!Files.exists(file)) {
            fail(missing(file, "WasmCompiler"));
        }
        assertEquals(Files.readString(file), text.toString(), "the listing of " + op + " changed; " + howToRefresh("WasmCompiler"));
    }

    /**
     * Every golden Wasm kernel parsed and validated by an implementation other than our encoder and
     * V8: wasmtime (Cranelift). This wasmtime has no relaxed SIMD and no shared memory, so relaxed
     * and split kernels are left to V8 (the harness runs every one).
     */
    @Test
    void goldenWasmKernelsValidateInWasmtime() {
        WasmCompiler wasm = new WasmCompiler();
        int validated = 0;
        try (Engine engine = new Engine()) {
            for (Map.Entry<String, Case> c : wasmSet().entrySet()) {
                if (c.getValue().schedule().relaxedSimd() || c.getValue().schedule().split().isSplit()) {
                    continue;
                }
                byte[] bytes = wasm.compile(c.getValue().op(), c.getValue().schedule()).wasm();
                try (Module module = new Module(engine, bytes)) {
                    validated++;
                } catch (RuntimeException e) {
                    fail(c.getKey() + ": wasmtime refuses the module: " + e.getMessage());
                }
            }
        }
        assertTrue(validated >= wasmSet().size() - 3, "only " + validated + " kernels validated");
    }

    /** Ops of every kind the backend compiles, each with schedules that exercise its code paths. */
    private static Map<String, Case> wasmSet() {
        Map<String, Case> set = new LinkedHashMap<>();
        Op square = Op.matmul(64, 64, 64);
        for (Schedule s : FixedCandidates.all()) {
            set.put("matmul-64 " + s, new Case(square, s));
        }
        Schedule tile = Schedule.registerTile(4, 8, true, 0);
        set.put("matmul-64 relaxed packed columns-outer", new Case(square, tile.withRelaxedSimd(true).withPackB(true).withColumnsOuter(true)));
        set.put("matmul-odd edges", new Case(Op.matmul(7, 13, 37), Schedule.registerTile(2, 16, true, 2)));
        set.put("matmul bias gelu_erf", new Case(Op.matmul(16, 32, 64).withEpilogue(Epilogue.of(Epilogue.Kind.BIAS),
                Epilogue.of(Epilogue.Kind.GELU_ERF)), tile));
        set.put("matmul scale bias residual gelu_tanh relu", new Case(Op.matmul(16, 32, 64).withEpilogue(Epilogue.scale(0.125f),
                Epilogue.of(Epilogue.Kind.BIAS), Epilogue.of(Epilogue.Kind.RESIDUAL), Epilogue.of(Epilogue.Kind.GELU_TANH),
                Epilogue.of(Epilogue.Kind.RELU)), tile.withPackB(true)));
        set.put("matmul transposeB packed", new Case(Op.matmul(16, 32, 64).withTransposedB(true), tile.withPackB(true)));
        set.put("batch_matmul", new Case(Op.batchMatmul(3, 7, 13, 5), FixedCandidates.all().get(3)));
        set.put("batch_matmul transposeB scale", new Case(Op.batchMatmul(12, 16, 64, 16).withTransposedB(true)
                .withEpilogue(Epilogue.scale(0.125f)), Schedule.registerTile(2, 8, true, 0).withPackB(true)));
        set.put("batch_matmul broadcastB", new Case(Op.batchMatmul(4, 8, 16, 32).withBroadcastB(true), tile));
        set.put("matmul scalar", new Case(Op.matmul(9, 10, 11), Schedule.registerTile(2, 4, false, 4)));
        for (OpKind kind : List.of(OpKind.SOFTMAX, OpKind.LAYER_NORM)) {
            set.put(kind + " vector", new Case(new Op(kind, 12, 40), ROW_VECTOR));
            set.put(kind + " scalar unrolled", new Case(new Op(kind, 12, 40), new Schedule(0, 0, 0, 0, 0, 0, false, 2)));
        }
        set.put("LAYER_NORM epsilon", new Case(new Op(OpKind.LAYER_NORM, 4, 768).withEpsilon(1e-12f), ROW_VECTOR));
        for (OpKind kind : List.of(OpKind.ADD, OpKind.MUL)) {
            set.put(kind + " vector unrolled", new Case(new Op(kind, 1000), new Schedule(0, 0, 0, 0, 0, 0, true, 3)));
        }
        set.put("matmul_int8", new Case(new Op(OpKind.MATMUL_INT8, 16, 64, 32), new Schedule(8, 2, 0, 0, 0, 0, true, 2, false, true)));
        set.put("matmul_int8 odd edges bias gelu_erf", new Case(new Op(OpKind.MATMUL_INT8, 7, 13, 37)
                .withEpilogue(Epilogue.of(Epilogue.Kind.BIAS), Epilogue.of(Epilogue.Kind.GELU_ERF)),
                new Schedule(12, 3, 0, 0, 0, 0, true, 0, false, true)));
        set.put("matmul_q4", new Case(new Op(OpKind.MATMUL_Q4, 16, 64, 32), new Schedule(4, 2, 0, 0, 0, 0, true, 2, false, true)));
        set.put("matmul_q4 staged", new Case(new Op(OpKind.MATMUL_Q4, 16, 64, 32),
                new Schedule(4, 2, 0, 0, 0, 0, true, 1, false, true).withColumnsOuter(true)));
        set.put("matmul_q4 odd edges bias gelu_erf", new Case(new Op(OpKind.MATMUL_Q4, 7, 45, 13)
                .withEpilogue(Epilogue.of(Epilogue.Kind.BIAS), Epilogue.of(Epilogue.Kind.GELU_ERF)), new Schedule(3, 2, 0, 0, 0, 0, true, 1, false, true)));
        set.put("matmul_f16", new Case(new Op(OpKind.MATMUL_F16, 16, 64, 30).withEpilogue(Epilogue.of(Epilogue.Kind.BIAS)),
                new Schedule(8, 2, 0, 0, 0, 0, true, 2)));
        set.put("matmul_f16 staged", new Case(new Op(OpKind.MATMUL_F16, 16, 64, 30), new Schedule(8, 2, 0, 0, 0, 0, true, 1).withColumnsOuter(true)));
        set.put("conv 3x3 pads bias relu", new Case(Op.conv(1, 8, 14, 14, 16, 3, 3, ConvWindow.PLAIN.withPads(1, 1, 1, 1))
                .withEpilogue(Epilogue.of(Epilogue.Kind.BIAS), Epilogue.of(Epilogue.Kind.RELU)), new Schedule(8, 2, 0, 0, 0, 0, true, 2)));
        set.put("conv depthwise stride 2", new Case(Op.conv(1, 8, 15, 15, 8, 3, 3,
                ConvWindow.PLAIN.withStrides(2, 2).withPads(1, 1, 1, 1).withGroup(8)), new Schedule(4, 1, 0, 0, 0, 0, true, 0)));
        set.put("conv 1-D dilated split", new Case(Op.conv(2, 4, 1, 40, 6, 1, 3, ConvWindow.PLAIN.withDilations(1, 2).withPads(0, 2, 0, 2)),
                new Schedule(16, 1, 0, 0, 0, 0, true, 0).withSplit(Split.rows(1))));
        return set;
    }

    private static Map<String, Case> wgslSet() {
        Map<String, Case> set = new LinkedHashMap<>();
        set.put("matmul-64 tiled", new Case(Op.matmul(64, 64, 64), new Schedule(4, 2, 0, 32, 8, 0, true, 2)));
        set.put("matmul-odd vector", new Case(Op.matmul(7, 13, 66), Schedule.registerTile(2, 8, true, 0)));
        set.put("matmul bias gelu_erf", new Case(Op.matmul(16, 32, 64).withEpilogue(Epilogue.of(Epilogue.Kind.BIAS),
                Epilogue.of(Epilogue.Kind.GELU_ERF)), new Schedule(4, 4, 0, 0, 0, 0, true, 0)));
        set.put("batch_matmul transposeB", new Case(Op.batchMatmul(3, 7, 13, 5).withTransposedB(true), Schedule.registerTile(1, 4, true, 0)));
        set.put("softmax", new Case(new Op(OpKind.SOFTMAX, 12, 40), new Schedule(0, 0, 0, 0, 0, 0, false, 0)));
        set.put("layer_norm", new Case(new Op(OpKind.LAYER_NORM, 3, 10), new Schedule(0, 0, 0, 0, 0, 0, false, 0)));
        set.put("conv 3x3 pads groups bias relu", new Case(Op.conv(2, 8, 13, 14, 12, 3, 3, ConvWindow.PLAIN.withPads(1, 1, 1, 1).withGroup(2))
                .withEpilogue(Epilogue.of(Epilogue.Kind.BIAS), Epilogue.of(Epilogue.Kind.RELU)), new Schedule(4, 2, 0, 8, 4, 0, false, 0)));
        set.put("conv 1-D dilated stride 2", new Case(Op.conv(1, 6, 1, 40, 10, 1, 5, ConvWindow.PLAIN.withStrides(1, 2).withDilations(1, 2)
                .withPads(0, 4, 0, 3)), new Schedule(2, 4, 0, 0, 0, 0, false, 0)));
        return set;
    }

    private record Case(Op op, Schedule schedule) {
    }

    private interface Backend {
        GeneratedKernel compile(Op op, Schedule schedule);
    }

    private static void checkHashes(String name, String compiler, Map<String, Case> set, Backend backend) throws IOException {
        List<String> lines = new ArrayList<>();
        for (Map.Entry<String, Case> c : set.entrySet()) {
            lines.add(sha256(backend.compile(c.getValue().op(), c.getValue().schedule()).code()) + "  " + c.getKey());
        }
        Path file = GOLDEN.resolve(name);
        if (UPDATE) {
            Files.write(file, lines, StandardCharsets.UTF_8);
        }
        if (!Files.exists(file)) {
            fail(missing(file, compiler));
        }
        List<String> golden = Files.readAllLines(file, StandardCharsets.UTF_8);
        List<String> changed = new ArrayList<>();
        for (int i = 0; i < Math.max(golden.size(), lines.size()); i++) {
            String want = i < golden.size() ? golden.get(i) : "(none)";
            String got = i < lines.size() ? lines.get(i) : "(none)";
            if (!want.equals(got)) {
                changed.add("  golden " + want + "\n  now    " + got);
            }
        }
        if (!changed.isEmpty()) {
            fail(changed.size() + " kernels differ from " + file + ":\n" + String.join("\n", changed) + "\n" + howToRefresh(compiler));
        }
    }

    private static String missing(Path file, String compiler) {
        return "no golden file " + file + " for this emitter revision; " + howToRefresh(compiler);
    }

    private static String howToRefresh(String compiler) {
        return "(JDK " + Runtime.version().feature() + " here; the files are JDK 17's) if the change is meant, bump " + compiler + ".EMITTER_REVISION (caches key kernels by it), then write the golden files with "
                + "./mvnw -pl compiler test -Dtest=GoldenKernelsTest -Djitzoo.golden.update=true and review their diff";
    }

    private static String sha256(byte[] bytes) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
