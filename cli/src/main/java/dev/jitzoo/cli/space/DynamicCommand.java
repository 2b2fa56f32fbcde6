package dev.jitzoo.cli.space;

import com.google.protobuf.util.JsonFormat;
import dev.jitzoo.proto.codegen.v1.GenerateRequest;
import dev.jitzoo.proto.kernel.v1.Backend;
import dev.jitzoo.proto.kernel.v1.DeviceProfile;
import dev.jitzoo.proto.kernel.v1.Schedule;
import dev.jitzoo.space.device.DeviceProfiles;
import dev.jitzoo.space.dynamic.Plan;
import dev.jitzoo.space.dynamic.PlanComposer;
import dev.jitzoo.space.dynamic.Thresholds;
import dev.jitzoo.space.dynamic.UKernel;
import dev.jitzoo.space.dynamic.UKernelSet;
import dev.jitzoo.space.lite.LiteSpace;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code ./jitzoo space dynamic}: FTuner's uKernel set for a MatMul whose M axis (a sequence length)
 * varies over a range, and the plan composed for each extent, as JSON. With {@code --requests}, the
 * uKernels as codegen requests (and, for {@code ./jitzoo bench dynamic}, the kernels of the padding
 * approach and of every exact extent).
 */
@Command(name = "dynamic", mixinStandardHelpOptions = true, sortOptions = false,
        description = "FTuner uKernels and composed plans for a MatMul with a dynamic M axis (Wasm), as JSON.",
        footer = {"", "Examples:", "  ./jitzoo space dynamic                                # BERT-base: 1..512,768,768",
                "  ./jitzoo space dynamic --shape 1..128,768,3072 --extent 77"})
final class DynamicCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;


    private static final Pattern SHAPE = Pattern.compile("(\\d+)\\.\\.(\\d+),(\\d+),(\\d+)");

    @Option(names = "--shape", defaultValue = "1..512,768,768",
            description = "LO..HI,K,N: M varies over LO..HI (default: ${DEFAULT-VALUE}, BERT-base's projections)")
    String shape;

    @Option(names = "--device", defaultValue = "this-machine-wasm",
            description = "a bundled profile's name or a DeviceProfile JSON file (default: ${DEFAULT-VALUE})")
    String device;

    @Option(names = "--extent", description = "print only the plan of this extent")
    Integer extent;

    @Option(names = "--psi", defaultValue = "1.0", description = "compute-to-memory threshold ψ (default: ${DEFAULT-VALUE})")
    double psi;

    @Option(names = "--requests", description = "also write the uKernels as codegen requests (JSON lines) to this file")
    Path requests;

    @Option(names = "--padded-tile", description = "with --requests: also the kernels of padding M up to a multiple of this")
    Integer paddedTile;

    @Option(names = "--exact", description = "with --requests: also a kernel for every extent of the range")
    boolean exact;

    @Override
    public Integer call() throws IOException {
        PrintWriter stdout = spec.commandLine().getOut();
        Matcher m = SHAPE.matcher(shape.replace(" ", ""));
        if (!m.matches()) {
            throw new IllegalArgumentException("--shape must be LO..HI,K,N (as 1..512,768,768), got '" + shape + "'");
        }
        int lo = parse(m.group(1));
        int hi = parse(m.group(2));
        int k = parse(m.group(3));
        int n = parse(m.group(4));
        DeviceProfile profile = DeviceProfiles.load(device);
        LiteSpace space = new LiteSpace(LiteSpace.DEFAULT_RELAXATION, Integer.MAX_VALUE);
        UKernelSet set = UKernelSet.build(lo, hi, k, n, profile, space, Thresholds.WASM.withPsi(psi));
        PlanComposer composer = new PlanComposer(set);
        JsonFormat.Printer json = JsonFormat.printer().omittingInsignificantWhitespace();
        if (requests != null) {
            writeRequests(set, lo, hi, profile, space, json);
        }
        if (extent != null) {
            stdout.println(planJson(composer.compose(extent)));
            stdout.flush();
            return 0;
        }
        StringBuilder out = new StringBuilder("{\"op\":\"matmul\",\"range\":[" + lo + "," + hi + "],\"k\":" + k + ",\"n\":" + n
                + ",\"ukernels\":[");
        for (UKernel u : set.kernels()) {
            out.append(u == set.kernels().get(0) ? "" : ",").append(String.format(Locale.ROOT,
                    "{\"rows\":%d,\"schedule\":%s,\"pad\":%.4f,\"occupancy\":%.4f,\"intensity\":%.2f}",
                    u.rows(), json.print(u.schedule()), u.pad(), u.occupancy(), u.intensity()));
        }
        out.append("],\"plans\":[");
        for (int s = lo; s <= hi; s++) {
            out.append(s == lo ? "" : ",").append(planJson(composer.compose(s)));
        }
        stdout.println(out.append("]}"));
        stdout.flush();
        return 0;
    }

    private void writeRequests(UKernelSet set, int lo, int hi, DeviceProfile profile, LiteSpace space,
                               JsonFormat.Printer json) throws IOException {
        List<String> lines = new ArrayList<>();
        for (UKernel u : set.kernels()) {
            lines.add(request("ukernel", u.rows(), set, u.schedule(), json));
        }
        if (paddedTile != null) {
            if (paddedTile < 1) {
                throw new IllegalArgumentException("--padded-tile must be at least 1, got " + paddedTile);
            }
            for (int rows = paddedTile; rows < hi + paddedTile; rows += paddedTile) {
                lines.add(request("padded", rows, set, first(rows, set, profile, space), json));
            }
        }
        if (exact) {
            for (int rows = lo; rows <= hi; rows++) {
                lines.add(request("exact", rows, set, first(rows, set, profile, space), json));
            }
        }
        Files.write(requests, lines);
        System.err.printf("wrote %d kernel requests to %s%n", lines.size(), requests);
    }

    private static Schedule first(int rows, UKernelSet set, DeviceProfile profile, LiteSpace space) {
        return space.compose(UKernelSet.matmul(rows, set.k(), set.n()), profile, Backend.BACKEND_WASM).getCandidates(0).getSchedule();
    }

    private static String request(String kind, int rows, UKernelSet set, Schedule schedule, JsonFormat.Printer json)
            throws IOException {
        GenerateRequest r = GenerateRequest.newBuilder().setOp(UKernelSet.matmul(rows, set.k(), set.n()))
                .setBackend(Backend.BACKEND_WASM).setSchedule(schedule).build();
        return "{\"label\":\"" + kind + "-r" + rows + "\",\"request\":" + json.print(r) + "}";
    }

    private static String planJson(Plan p) {
        StringBuilder pieces = new StringBuilder();
        for (Plan.Piece piece : p.pieces()) {
            pieces.append(pieces.isEmpty() ? "" : ",").append("{\"rows\":").append(piece.rows())
                    .append(",\"count\":").append(piece.count()).append('}');
        }
        return String.format(Locale.ROOT, "{\"extent\":%d,\"pieces\":[%s],\"paddedExtent\":%d,\"calls\":%d,\"sia\":%.4f}",
                p.extent(), pieces, p.paddedExtent(), p.calls(), p.sia());
    }

    private static int parse(String digits) {
        try {
            return Integer.parseInt(digits);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("--shape: " + digits + " is too large");
        }
    }
}
