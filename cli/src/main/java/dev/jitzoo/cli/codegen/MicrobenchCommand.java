package dev.jitzoo.cli.codegen;

import dev.jitzoo.cli.OpNames;
import dev.jitzoo.compiler.KernelRequest;
import dev.jitzoo.compiler.kernel.Op;
import dev.jitzoo.compiler.kernel.Schedule;
import dev.jitzoo.compiler.kernel.WasmCompiler;
import dev.jitzoo.compiler.wasm.passes.Pass;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.StringJoiner;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code ./jitzoo codegen microbench}: the primitive microbenchmark suite (nnJIT section 5.1). One
 * large MatMul compiled in pairs that differ in one primitive only, off and on, from one base
 * schedule (2x16 SIMD tile, B packed, rows outside, plain multiply-adds, every pass: the form the
 * space's MatMul candidates take), written
 * as {@code PRIMITIVE.off.wasm} / {@code PRIMITIVE.on.wasm} with {@code suite.json} listing the pairs.
 * A device times each pair side by side (the SDK's {@code runMicrobench}); the space service fixes
 * the primitives whose winner is the same on every device seen.
 */
@Command(name = "microbench", mixinStandardHelpOptions = true,
        description = "Writes the primitive microbenchmark suite: kernel pairs that differ in one primitive, with suite.json.")
final class MicrobenchCommand implements Callable<Integer> {

    /** One primitive: its name (the space's vocabulary), and the schedules and passes with it off and on. */
    record Pair(String primitive, String description, Schedule off, Schedule on, Set<Pass> offPasses) {
    }

    static final Schedule BASE = Schedule.registerTile(2, 16, true, 1).withReductionTile(1).withPackB(true);

    /** The suite: every primitive the Wasm space can fix or leave open, one at a time from {@link #BASE}. */
    static final List<Pair> SUITE = List.of(
            new Pair("vectorize", "f32x4 SIMD instead of scalar f32 (2x8 tile)",
                    Schedule.registerTile(2, 8, false, 1).withReductionTile(1),
                    Schedule.registerTile(2, 8, true, 1).withReductionTile(1), Pass.ALL),
            new Pair("unroll", "two register steps per trip of the k loop", BASE,
                    Schedule.registerTile(2, 16, true, 2).withReductionTile(1).withPackB(true), Pass.ALL),
            new Pair("loop_order", "column blocks and tiles outside the rows", BASE, BASE.withColumnsOuter(true), Pass.ALL),
            new Pair("relaxed_simd", "f32x4.relaxed_madd instead of mul + add", BASE, BASE.withRelaxedSimd(true), Pass.ALL),
            new Pair("cache_read", "B packed once into tile-wide panels (cache_read)", BASE.withPackB(false), BASE, Pass.ALL),
            new Pair("passes", "the three Wasm passes (offset, load32_splat, local.tee)", BASE, BASE, Set.of()));

    @Option(names = "--out", required = true, description = "directory to write (created if missing)")
    Path out;

    @Option(names = "--op", defaultValue = "K1", description = "a paper kernel K0..K3 (default: ${DEFAULT-VALUE}, the largest MatMul)")
    String op;

    @Override
    public Integer call() throws IOException {
        Op parsed = KernelRequest.toOp(OpNames.parse(op, null));
        Files.createDirectories(out);
        WasmCompiler compiler = new WasmCompiler();
        StringJoiner suite = new StringJoiner(",\n  ", "[\n  ", "\n]\n");
        for (Pair pair : SUITE) {
            Artifacts.write(compiler.compile(parsed, pair.off(), pair.offPasses()), out.resolve(pair.primitive() + ".off.wasm"));
            Artifacts.write(compiler.compile(parsed, pair.on(), Pass.ALL), out.resolve(pair.primitive() + ".on.wasm"));
            suite.add("{\"primitive\":\"" + pair.primitive() + "\",\"description\":\"" + pair.description()
                    + "\",\"off\":\"" + pair.primitive() + ".off.wasm\",\"on\":\"" + pair.primitive() + ".on.wasm\"}");
        }
        Files.writeString(out.resolve("suite.json"), suite.toString(), StandardCharsets.UTF_8);
        System.err.printf("wrote %d primitive pairs of %s to %s%n", SUITE.size(), parsed, out);
        return 0;
    }
}
