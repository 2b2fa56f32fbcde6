package dev.jitzoo.cli.codegen;

import dev.jitzoo.cli.OpNames;
import dev.jitzoo.compiler.KernelRequest;
import dev.jitzoo.compiler.kernel.GeneratedKernel;
import dev.jitzoo.compiler.kernel.Op;
import dev.jitzoo.compiler.kernel.Schedule;
import dev.jitzoo.compiler.kernel.WasmCompiler;
import dev.jitzoo.compiler.wasm.passes.Pass;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.StringJoiner;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code ./jitzoo codegen passes}: one kernel compiled with the paper's pass sets (Table 5: none,
 * then offset, then + combined instruction, then + load/store to variable) and with each pass alone
 * left out, written as {@code passes-<label>.wasm} with an {@code index.json} that records each
 * one's passes, size and warm generation time, for the harness to time side by side.
 */
@Command(name = "passes", mixinStandardHelpOptions = true,
        description = "Writes one kernel per pass set, with index.json, for ./jitzoo bench passes.")
final class PassesCommand implements Callable<Integer> {

    private static final int WARM_RUNS = 3000;
    private static final int TIMED_RUNS = 1000;

    @Option(names = "--out", required = true, description = "directory to write (created if missing)")
    Path out;

    @Option(names = "--op", defaultValue = "K0", description = "a paper kernel K0..K3 (default: ${DEFAULT-VALUE})")
    String op;

    @Option(names = "--schedule", defaultValue = "{\"y0\":2,\"x0\":8,\"vectorize\":true,\"unroll\":2,\"packB\":true}",
            description = "the schedule, JSON or a file (default: ${DEFAULT-VALUE})")
    String schedule;

    @Override
    public Integer call() throws IOException {
        Op parsedOp = KernelRequest.toOp(OpNames.parse(op, null));
        Schedule parsedSchedule = ScheduleJson.parse(schedule);
        Files.createDirectories(out);
        WasmCompiler compiler = new WasmCompiler();
        StringJoiner index = new StringJoiner(",\n  ", "[\n  ", "\n]\n");
        for (Map.Entry<String, Set<Pass>> row : rows().entrySet()) {
            GeneratedKernel kernel = compiler.compile(parsedOp, parsedSchedule, row.getValue());
            String name = "passes-" + row.getKey();
            Artifacts.write(kernel, out.resolve(name + ".wasm"));
            index.add(String.format(Locale.ROOT,
                    "{\"name\":\"%s\",\"passes\":\"%s\",\"bytes\":%d,\"generation_us\":%.1f}", name,
                    Pass.describe(row.getValue()), kernel.wasm().length, warmMicros(compiler, parsedOp, parsedSchedule,
                            row.getValue())));
        }
        Files.writeString(out.resolve("index.json"), index.toString(), StandardCharsets.UTF_8);
        System.err.printf("wrote %d kernels of %s %s to %s%n", rows().size(), parsedOp, parsedSchedule, out);
        return 0;
    }

    /** The paper's cumulative rows, then all but one. */
    static Map<String, Set<Pass>> rows() {
        Map<String, Set<Pass>> rows = new LinkedHashMap<>();
        List<Pass> order = List.of(Pass.values());
        for (int i = 0; i <= order.size(); i++) {
            Set<Pass> on = order.subList(0, i).isEmpty() ? Set.of() : EnumSet.copyOf(order.subList(0, i));
            rows.put(i == 0 ? "none" : Pass.describe(on).replace(',', '+'), on);
        }
        for (Pass off : Pass.values()) {
            Set<Pass> on = EnumSet.allOf(Pass.class);
            on.remove(off);
            rows.put("all-but-" + off.label, on);
        }
        return rows;
    }

    /** Median of TIMED_RUNS compiles after WARM_RUNS unmeasured ones that warm the JIT (JMH in `bench codegen` is the careful figure). */
    private static double warmMicros(WasmCompiler compiler, Op op, Schedule schedule, Set<Pass> passes) {
        for (int i = 0; i < WARM_RUNS; i++) {
            compiler.compile(op, schedule, passes);
        }
        long[] nanos = new long[TIMED_RUNS];
        for (int i = 0; i < TIMED_RUNS; i++) {
            nanos[i] = compiler.compile(op, schedule, passes).generationNanos();
        }
        Arrays.sort(nanos);
        return nanos[TIMED_RUNS / 2] / 1000.0;
    }
}
