package dev.jitzoo.cli.space;

import dev.jitzoo.proto.kernel.v1.Backend;
import dev.jitzoo.proto.kernel.v1.DeviceProfile;
import dev.jitzoo.proto.kernel.v1.OpSpec;
import dev.jitzoo.proto.rules.PaperKernels;
import dev.jitzoo.proto.space.v1.ComposeResponse;
import dev.jitzoo.space.device.DeviceProfiles;
import dev.jitzoo.space.lite.LiteSpace;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code ./jitzoo bench space-size}: for K0..K3 on every bundled profile and each backend it has,
 * the lite space's size beside the naive space's and the paper's Table 6 (AutoTVM's space, and
 * nnJIT's: Wasm 10 to 32, WebGPU 41 for K0 and 30 for K2).
 */
@Command(name = "size", mixinStandardHelpOptions = true,
        description = "Lite space sizes for K0..K3 on every bundled device, beside the naive space and the paper's Table 6.")
final class SizeCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;


    /** Paper Table 6 (K0 and K2 only): AutoTVM's Wasm and WebGPU spaces, nnJIT's WebGPU space. */
    private static final Map<String, long[]> PAPER = Map.of("K0", new long[] {2_099_520, 42_768_000, 41},
            "K2", new long[] {2_694_384, 74_131_200, 30});

    @Option(names = "--json", description = "also print the figures as one JSON object on the last line")
    boolean json;

    @Option(names = "--relaxation", defaultValue = "" + LiteSpace.DEFAULT_RELAXATION,
            description = "relaxation ratio of the resource heuristics (default: ${DEFAULT-VALUE})")
    double relaxation;

    @Override
    public Integer call() {
        PrintWriter stdout = spec.commandLine().getOut();
        LiteSpace space = new LiteSpace(relaxation, Integer.MAX_VALUE);
        List<String> rows = new ArrayList<>();
        StringBuilder out = new StringBuilder();
        out.append(String.format(Locale.ROOT, "%-4s %-22s %-7s %6s %16s %10s   %s%n", "op", "device", "backend", "lite",
                "naive", "reduction", "paper (AutoTVM space; nnJIT lite)"));
        long worstReduction = Long.MAX_VALUE;
        int largest = 0;
        for (String name : PaperKernels.ALL.keySet()) {
            OpSpec op = PaperKernels.ALL.get(name);
            for (String deviceName : DeviceProfiles.BUNDLED) {
                DeviceProfile device = DeviceProfiles.bundled(deviceName);
                for (Backend backend : DeviceProfiles.backends(device)) {
                    ComposeResponse r = space.compose(op, device, backend);
                    String label = backend == Backend.BACKEND_WASM ? "wasm" : "webgpu";
                    long reduction = r.getNaiveSpaceSize() / Math.max(1, r.getLiteSpaceSize());
                    worstReduction = Math.min(worstReduction, reduction);
                    largest = Math.max(largest, r.getLiteSpaceSize());
                    long[] paper = PAPER.get(name);
                    String reference = paper == null ? "-" : backend == Backend.BACKEND_WASM
                            ? String.format(Locale.ROOT, "%,d; 10-32", paper[0])
                            : String.format(Locale.ROOT, "%,d; %d", paper[1], paper[2]);
                    out.append(String.format(Locale.ROOT, "%-4s %-22s %-7s %6d %,16d %,9dx   %s%n", name, deviceName, label,
                            r.getLiteSpaceSize(), r.getNaiveSpaceSize(), reduction, reference));
                    rows.add(String.format(Locale.ROOT,
                            "{\"op\":\"%s\",\"device\":\"%s\",\"backend\":\"%s\",\"lite\":%d,\"naive\":%d,\"reduction\":%d}",
                            name, deviceName, label, r.getLiteSpaceSize(), r.getNaiveSpaceSize(), reduction));
                }
            }
        }
        out.append(String.format(Locale.ROOT, "largest lite space %d (target <= 48); smallest reduction %,dx (target >= 10,000x)%n",
                largest, worstReduction));
        stdout.print(out);
        if (json) {
            stdout.println("{\"bench\":\"space-size\",\"relaxation\":" + relaxation + ",\"largest\":" + largest
                    + ",\"smallest_reduction\":" + worstReduction + ",\"rows\":[" + String.join(",", rows) + "]}");
        }
        stdout.flush();
        return 0;
    }
}
