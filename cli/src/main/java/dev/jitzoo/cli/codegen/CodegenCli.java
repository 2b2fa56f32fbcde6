package dev.jitzoo.cli.codegen;

import dev.jitzoo.cli.OpNames;
import dev.jitzoo.compiler.KernelRequest;
import dev.jitzoo.compiler.kernel.Epilogue;
import dev.jitzoo.compiler.kernel.GeneratedKernel;
import dev.jitzoo.compiler.kernel.Op;
import dev.jitzoo.compiler.kernel.Schedule;
import dev.jitzoo.compiler.kernel.WasmCompiler;
import dev.jitzoo.compiler.wasm.Listing;
import dev.jitzoo.compiler.wasm.passes.Pass;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code ./jitzoo codegen}: one kernel to a file, no servers. The artifact goes to {@code -o FILE}
 * and its ABI metadata beside it ({@code FILE} with the extension {@code .json}).
 */
@Command(name = "codegen", mixinStandardHelpOptions = true, sortOptions = false,
        description = "Generates one kernel (op + schedule) and writes the artifact; no servers needed.",
        subcommands = {CasesCommand.class, PassesCommand.class, MicrobenchCommand.class},
        footer = {"", "Example:",
                "  ./jitzoo codegen --backend wasm --op matmul --shape 384,768,768 \\",
                "      --schedule '{\"y0\":4,\"x0\":16,\"vectorize\":true,\"unroll\":2,\"packB\":true}' -o k0.wasm --print"})
public final class CodegenCli implements Callable<Integer> {

    @Spec
    CommandLine.Model.CommandSpec spec;

    @Option(names = "--backend", defaultValue = "wasm", description = "wasm or wgsl (default: ${DEFAULT-VALUE})")
    String backend;

    @Option(names = "--op", description = "matmul, batch_matmul, or a paper kernel K0..K3 (then --shape may be left out)")
    String op;

    @Option(names = "--shape", description = "dimensions, comma-separated: M,K,N or batch,M,K,N")
    String shape;

    @Option(names = "--transpose-b", description = "B is stored transposed, [N, K]")
    boolean transposeB;

    @Option(names = "--broadcast-b", description = "batch_matmul: one B [K, N] for every batch")
    boolean broadcastB;

    @Option(names = "--epilogue", split = ",", description = "steps fused after the product, in order: "
            + "scale:F, bias, relu, gelu_tanh, gelu_erf, silu, residual")
    List<String> epilogue = List.of();

    @Option(names = "--schedule", description = "the schedule as a JSON object, or a file holding one, "
            + "e.g. '{\"y0\":2,\"x0\":8,\"vectorize\":true}'")
    String schedule;

    @Option(names = "--passes", defaultValue = "all", description = "Wasm passes to run: all, none, or a list of "
            + "offset,splat,tee (default: ${DEFAULT-VALUE})")
    String passes;

    @Option(names = {"-o", "--out"}, description = "artifact file to write (metadata goes beside it, as .json)")
    Path out;

    @Option(names = "--print", description = "print a readable listing (Wasm) or the source (WGSL)")
    boolean print;

    @Override
    public Integer call() throws IOException {
        if (schedule == null) {
            throw new IllegalArgumentException("give --schedule (JSON or a file); see --help");
        }
        if (out == null && !print) {
            throw new IllegalArgumentException("give -o FILE to write the artifact, or --print to list it");
        }
        Op parsedOp = KernelRequest.toOp(OpNames.parse(op, shape)).withTransposedB(transposeB).withBroadcastB(broadcastB)
                .withEpilogue(epilogue.stream().map(Epilogue::parse).toArray(Epilogue[]::new));
        Schedule parsedSchedule = ScheduleJson.parse(schedule);
        Set<Pass> parsedPasses = Pass.parse(passes);
        Backends.Backend chosen = Backends.parse(backend);
        GeneratedKernel kernel = chosen.compile(parsedOp, parsedSchedule, parsedPasses);
        PrintWriter stdout = spec.commandLine().getOut();
        if (print) {
            stdout.print(chosen == Backends.Backend.WASM
                    ? listing(parsedOp, parsedSchedule, parsedPasses)
                    : new String(kernel.wasm(), java.nio.charset.StandardCharsets.UTF_8));
            stdout.flush();
        }
        if (out != null) {
            Path metadata = Artifacts.write(kernel, out);
            spec.commandLine().getErr().printf("wrote %s (%d bytes, kernel %s, generated in %d us) and %s%n", out,
                    kernel.wasm().length, kernel.kernelId(), kernel.generationNanos() / 1000, metadata);
        }
        return 0;
    }

    private static String listing(Op op, Schedule schedule, Set<Pass> passes) {
        StringBuilder text = new StringBuilder();
        WasmCompiler.lower(op, schedule, passes).forEach(f -> text.append(Listing.of(f.name(), f.function())));
        return text.toString();
    }
}
