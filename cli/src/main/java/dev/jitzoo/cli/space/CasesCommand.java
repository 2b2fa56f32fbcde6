package dev.jitzoo.cli.space;

import com.google.protobuf.util.JsonFormat;
import dev.jitzoo.cli.OpNames;
import dev.jitzoo.proto.codegen.v1.GenerateRequest;
import dev.jitzoo.proto.kernel.v1.Backend;
import dev.jitzoo.proto.kernel.v1.DeviceProfile;
import dev.jitzoo.proto.kernel.v1.OpSpec;
import dev.jitzoo.proto.rules.OpRules;
import dev.jitzoo.proto.rules.PaperKernels;
import dev.jitzoo.proto.space.v1.Candidate;
import dev.jitzoo.space.device.DeviceProfiles;
import dev.jitzoo.space.lite.LiteSpace;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code ./jitzoo space cases}: every candidate the space produces for K0..K3 on the chosen devices,
 * as the codegen requests the gateway would send (WGSL ones with the device's limits), one JSON
 * object {@code {"label", "request"}} per line, best first per op and device. The label is
 * {@code OP-DEVICE-BACKEND-Lnn}, nn the candidate's place in the ordering. {@code ./jitzoo codegen
 * cases --requests FILE} compiles them.
 */
@Command(name = "cases", mixinStandardHelpOptions = true,
        description = "Writes every lite-space candidate of K0..K3 as codegen requests, one JSON object per line.")
final class CasesCommand implements Callable<Integer> {

    @Option(names = "--out", required = true, description = "file to write")
    Path out;

    @Option(names = "--device", split = ",", description = "devices (default: every bundled one)")
    List<String> devices = DeviceProfiles.BUNDLED;

    @Option(names = "--op", split = ",", description = "paper kernels, or ops as name:MxKxN (matmul_int8:128x384x384, matmul_q4:1x384x1536; "
            + "a conv's window after its dimensions: conv:1x32x15x15x32x3x3/stride=2x2/pads=1x1x1x1/group=32) (default: K0,K1,K2,K3)")
    List<String> ops = List.copyOf(PaperKernels.ALL.keySet());

    @Option(names = "--backend", defaultValue = "all", description = "wasm, webgpu or all (default: ${DEFAULT-VALUE})")
    String backend;

    @Option(names = "--relaxation", defaultValue = "" + LiteSpace.DEFAULT_RELAXATION,
            description = "relaxation ratio of the resource heuristics (default: ${DEFAULT-VALUE})")
    double relaxation;

    @Option(names = "--threads", defaultValue = "1",
            description = "threads the devices' Wasm kernels run on: above 1 every Wasm candidate is split for them, "
                    + "and labels end in -T<threads> (default: ${DEFAULT-VALUE})")
    int threads;

    @Override
    public Integer call() throws IOException {
        if (threads < 1) {
            throw new IllegalArgumentException("--threads must be at least 1, got " + threads);
        }
        LiteSpace space = new LiteSpace(relaxation, Integer.MAX_VALUE);
        JsonFormat.Printer json = JsonFormat.printer().omittingInsignificantWhitespace();
        List<String> lines = new ArrayList<>();
        for (String opName : ops) {
            int colon = opName.indexOf(':');
            String shape = colon < 0 ? null : opName.substring(colon + 1);
            int window = shape == null ? -1 : shape.indexOf('/');
            OpSpec op = shape == null ? OpNames.parse(opName, null) : OpNames.parse(opName.substring(0, colon),
                    window < 0 ? shape.replace('x', ',') : shape.substring(0, window).replace('x', ',') + shape.substring(window));
            for (String deviceName : devices) {
                DeviceProfile device = withThreads(DeviceProfiles.load(deviceName));
                for (Backend b : DeviceProfiles.backends(device)) {
                    if (!backend.equals("all") && SpaceCli.backend(backend) != b
                            || b == Backend.BACKEND_WGSL && !OpRules.hasWgslKernels(op.getKind())) { // quantized products run on Wasm only
                        continue;
                    }
                    List<Candidate> candidates = space.compose(op, device, b).getCandidatesList();
                    for (int rank = 0; rank < candidates.size(); rank++) {
                        GenerateRequest.Builder request = GenerateRequest.newBuilder().setOp(op).setBackend(b)
                                .setSchedule(candidates.get(rank).getSchedule());
                        if (b == Backend.BACKEND_WGSL) {
                            request.setWebgpuLimits(DeviceProfiles.limits(device));
                        }
                        String label = String.format(Locale.ROOT, "%s-%s-%s-L%02d", opName.replaceAll("[^A-Za-z0-9_]", "-").toUpperCase(Locale.ROOT),
                                device.getName().isEmpty() ? "device" : device.getName(),
                                b == Backend.BACKEND_WASM ? "wasm" : "webgpu", rank)
                                + (threads > 1 && b == Backend.BACKEND_WASM ? "-T" + threads : "");
                        lines.add("{\"label\":\"" + label + "\",\"request\":" + json.print(request) + "}");
                    }
                }
            }
        }
        Files.write(out, lines);
        System.err.printf("wrote %d candidates to %s%n", lines.size(), out);
        return 0;
    }

    /** The device as a page running its Wasm kernels on {@link #threads} threads reports it. */
    private DeviceProfile withThreads(DeviceProfile device) {
        if (threads == 1 || !device.hasWasm()) {
            return device;
        }
        return device.toBuilder().setWasm(device.getWasm().toBuilder().setThreads(true).setThreadsUsed(threads)).build();
    }
}
