package dev.jitzoo.cli.space;

import dev.jitzoo.space.primitives.MicrobenchResult;
import dev.jitzoo.space.primitives.Primitive;
import dev.jitzoo.space.primitives.PrimitiveTable;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.stream.Collectors;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code ./jitzoo space primitives}: the web-consistent primitive table, each primitive's verdict
 * (fixed on, fixed off, open) beside every pooled result's speedup.
 */
@Command(name = "primitives", mixinStandardHelpOptions = true,
        description = "The primitive table the space fixes primitives by: the shipped microbenchmark results, pooled with more.")
final class PrimitivesCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;


    @Option(names = "--results", description = "more results: a file or a directory of *.json (./jitzoo microbench stores them in .jitzoo/microbench)")
    Path results;

    @Option(names = "--threshold", defaultValue = "" + PrimitiveTable.DEFAULT_THRESHOLD,
            description = "consistency threshold θ (default: ${DEFAULT-VALUE})")
    double threshold;

    @Option(names = "--json", description = "also print the table as one JSON object on the last line")
    boolean json;

    @Override
    public Integer call() throws Exception {
        PrintWriter stdout = spec.commandLine().getOut();
        PrimitiveTable table = PrimitiveTable.pooled(results, threshold);
        List<MicrobenchResult> all = table.results();
        stdout.printf(Locale.ROOT, "%d results pooled (threshold %.2f): %s%n", all.size(), threshold,
                all.stream().map(r -> r.runner() + " on " + r.device()).collect(Collectors.joining("; ")));
        stdout.printf("%-13s %-5s  %s%n", "primitive", "fixed", "speedup on each (off time / on time)");
        StringBuilder out = new StringBuilder("{\"threshold\":" + threshold + ",\"results\":" + all.size() + ",\"primitives\":{");
        for (Primitive p : Primitive.values()) {
            List<Double> speedups = PrimitiveTable.speedups(all, p);
            String verdict = table.verdict(p).name().toLowerCase(Locale.ROOT);
            stdout.printf("%-13s %-5s  %s%n", p.key(), verdict,
                    speedups.stream().map(s -> String.format(Locale.ROOT, "%.2fx", s)).collect(Collectors.joining(" ")));
            out.append(p.ordinal() == 0 ? "" : ",").append('"').append(p.key()).append("\":\"").append(verdict).append('"');
        }
        if (json) {
            stdout.println(out.append("}}"));
        }
        stdout.flush();
        return 0;
    }
}
