package dev.jitzoo.cli.bench;

import dev.jitzoo.compiler.kernel.GeneratedKernel;
import dev.jitzoo.compiler.kernel.Op;
import dev.jitzoo.compiler.kernel.Schedule;
import dev.jitzoo.compiler.kernel.WasmCompiler;
import dev.jitzoo.compiler.wgsl.WgslCompiler;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.RunnerException;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;
import org.openjdk.jmh.runner.options.VerboseMode;

/**
 * {@code ./jitzoo bench codegen}, the generation half: the median warm time to generate one
 * candidate (JMH, sample mode) against the conventional pipeline's time for the same kernel
 * (C → clang -O3 → wasm-ld), and both kernels written to a directory for the harness to time side
 * by side. Prints one JSON object on its last line.
 *
 * <p>Op and schedule from the system properties
 * {@code jitzoo.bench.op} (M,K,N or batch,M,K,N; default K0's 384,768,768) and
 * {@code jitzoo.bench.schedule} (y0,x0,unroll,packB; default 2,8,2,true).
 */
public final class CodegenBench {

    private static final int CLANG_RUNS = 5;

    /** The WGSL candidate timed beside the Wasm one: 4×4 register tiles, 64×64 workgroup blocks, k staged by 16, vec4. */
    static final Schedule WGSL_SCHEDULE = new Schedule(4, 4, 0, 64, 64, 16, true, 2);

    private CodegenBench() {
    }

    static Op op() {
        String[] dims = System.getProperty("jitzoo.bench.op", "384,768,768").split(",");
        int[] d = java.util.Arrays.stream(dims).mapToInt(Integer::parseInt).toArray();
        return d.length == 4 ? Op.batchMatmul(d[0], d[1], d[2], d[3]) : Op.matmul(d[0], d[1], d[2]);
    }

    static Schedule schedule() {
        String[] f = System.getProperty("jitzoo.bench.schedule", "2,8,2,true").split(",");
        return Schedule.registerTile(Integer.parseInt(f[0]), Integer.parseInt(f[1]), true, Integer.parseInt(f[2]))
                .withPackB(Boolean.parseBoolean(f[3]));
    }

    /** Writes both kernels to {@code out}, prints progress on stderr, and returns the figures as one JSON object. */
    static String measure(Path out, boolean quick) {
        try {
            return measureOrThrow(out, quick);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (RunnerException e) {
            throw new IllegalStateException("JMH failed: " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }

    private static String measureOrThrow(Path out, boolean quick) throws IOException, RunnerException, InterruptedException {
        Files.createDirectories(out);
        Op op = op();
        Schedule schedule = schedule();
        GeneratedKernel ours = new WasmCompiler().compile(op, schedule);
        Files.write(out.resolve("jitzoo.wasm"), ours.wasm());
        Files.writeString(out.resolve("jitzoo.json"), ours.metadataJson(), StandardCharsets.UTF_8);

        GeneratedKernel wgsl = new WgslCompiler().compile(op, WGSL_SCHEDULE);
        System.err.println("generating with our compiler under JMH (warm, sample mode), Wasm and WGSL");
        Map<String, Double> medians = jmhMedianMicros(quick);
        double oursMicros = medians.get("wasm");
        System.err.printf(Locale.ROOT, "ours: median %.1f us per Wasm candidate, %.1f us per WGSL one%n", oursMicros,
                medians.get("wgsl"));

        String missing = ClangPipeline.unavailableReason();
        String clangJson;
        if (missing != null) {
            System.err.println("conventional pipeline skipped: " + missing);
            clangJson = "null";
        } else {
            System.err.printf("generating with clang -O3 + wasm-ld, %d runs%n", CLANG_RUNS);
            ClangPipeline clang = new ClangPipeline(Files.createTempDirectory("jitzoo-clang"));
            List<Long> nanos = new ArrayList<>();
            byte[] wasm = null;
            for (int i = 0; i < CLANG_RUNS; i++) {
                ClangPipeline.Result result = clang.compile(op, schedule);
                nanos.add(result.nanos());
                wasm = result.wasm();
            }
            Files.write(out.resolve("clang.wasm"), wasm);
            Files.writeString(out.resolve("clang.json"), ours.metadataJson(), StandardCharsets.UTF_8);
            double clangMillis = Percentiles.median(nanos) / 1e6;
            clangJson = String.format(Locale.ROOT, "{\"median_ms\":%.1f,\"bytes\":%d,\"runs\":%d}", clangMillis, wasm.length,
                    CLANG_RUNS);
            System.err.printf(Locale.ROOT, "clang + wasm-ld: median %.1f ms per candidate; ours %.1f us: %.0fx faster%n",
                    clangMillis, oursMicros, clangMillis * 1000 / oursMicros);
        }
        return String.format(Locale.ROOT, "{\"op\":\"%s\",\"schedule\":\"%s\",\"jitzoo\":{\"median_us\":%.1f,\"bytes\":%d},"
                + "\"wgsl\":{\"schedule\":\"%s\",\"median_us\":%.1f,\"bytes\":%d},\"clang\":%s}", op, schedule, oursMicros,
                ours.wasm().length, WGSL_SCHEDULE, medians.get("wgsl"), wgsl.code().length, clangJson);
    }

    /** Median microseconds per candidate, by backend. */
    private static Map<String, Double> jmhMedianMicros(boolean quick) throws RunnerException {
        Collection<RunResult> results = new Runner(new OptionsBuilder()
                .include(GenerationBenchmark.class.getName())
                .mode(Mode.SampleTime).timeUnit(TimeUnit.MICROSECONDS)
                .forks(1)
                .verbosity(VerboseMode.SILENT)
                .jvmArgsAppend("-Djitzoo.bench.op=" + System.getProperty("jitzoo.bench.op", "384,768,768"),
                        "-Djitzoo.bench.schedule=" + System.getProperty("jitzoo.bench.schedule", "2,8,2,true"))
                .warmupIterations(quick ? 1 : 3).warmupTime(TimeValue.seconds(1))
                .measurementIterations(quick ? 2 : 5).measurementTime(TimeValue.seconds(1))
                .build()).run();
        Map<String, Double> medians = new TreeMap<>();
        for (RunResult result : results) {
            medians.put(result.getParams().getParam("backend"), result.getPrimaryResult().getStatistics().getPercentile(50));
        }
        return medians;
    }
}
