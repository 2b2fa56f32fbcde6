package dev.jitzoo.space.cli;

import com.google.protobuf.util.JsonFormat;
import dev.jitzoo.proto.kernel.v1.Backend;
import dev.jitzoo.proto.space.v1.ComposeResponse;
import dev.jitzoo.space.device.DeviceProfiles;
import dev.jitzoo.space.lite.LiteSpace;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code ./jitzoo space}: the lite space of one op on one device, as JSON, without servers. */
@Command(name = "jitzoo space", mixinStandardHelpOptions = true, sortOptions = false,
        description = "Prints the lite kernel space of an op on a device (what gRPC Compose returns), as JSON.",
        subcommands = {SizeCommand.class, CasesCommand.class, DynamicCommand.class, PrimitivesCommand.class},
        footer = {"", "Examples:", "  ./jitzoo space --backend wasm --op K0 --device this-machine-wasm",
                "  ./jitzoo space --backend webgpu --op matmul --shape 384,768,768 --device nvidia-ampere-webgpu",
                "", "Bundled devices: this-machine-wasm, nvidia-ampere-webgpu, intel-gen9-webgpu, arm-mali-webgpu"})
public final class SpaceCli implements Callable<Integer> {

    @Option(names = "--backend", defaultValue = "wasm", description = "wasm or webgpu (default: ${DEFAULT-VALUE})")
    String backend;

    @Option(names = "--op", description = "matmul, batch_matmul, or a paper kernel K0..K3 (then --shape may be left out)")
    String op;

    @Option(names = "--shape", description = "dimensions, comma-separated: M,K,N or batch,M,K,N")
    String shape;

    @Option(names = "--device", defaultValue = "this-machine-wasm",
            description = "a bundled profile's name or a DeviceProfile JSON file (default: ${DEFAULT-VALUE})")
    String device;

    @Option(names = "--relaxation", defaultValue = "" + LiteSpace.DEFAULT_RELAXATION,
            description = "relaxation ratio of the resource heuristics, (0, 1] (default: ${DEFAULT-VALUE})")
    double relaxation;

    @Option(names = "--max", defaultValue = "48", description = "most candidates to print (default: ${DEFAULT-VALUE})")
    int max;

    @Override
    public Integer call() throws Exception {
        ComposeResponse space = new LiteSpace(relaxation, max)
                .compose(PaperOps.parse(op, shape), DeviceProfiles.load(device), backend(backend));
        System.out.println(JsonFormat.printer().omittingInsignificantWhitespace().print(space));
        return 0;
    }

    static Backend backend(String name) {
        return switch (name) {
            case "wasm" -> Backend.BACKEND_WASM;
            case "webgpu", "wgsl" -> Backend.BACKEND_WGSL;
            default -> throw new IllegalArgumentException("--backend must be wasm or webgpu, got '" + name + "'");
        };
    }

    public static void main(String[] args) {
        CommandLine cli = new CommandLine(new SpaceCli());
        cli.setExecutionExceptionHandler((e, line, parsed) -> {
            line.getErr().println("jitzoo space: " + e.getMessage());
            return 2;
        });
        System.exit(cli.execute(args));
    }
}
