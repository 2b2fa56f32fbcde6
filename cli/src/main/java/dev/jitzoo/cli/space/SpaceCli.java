package dev.jitzoo.cli.space;

import com.google.protobuf.util.JsonFormat;
import dev.jitzoo.cli.OpNames;
import dev.jitzoo.proto.kernel.v1.Backend;
import dev.jitzoo.proto.kernel.v1.DeviceProfile;
import dev.jitzoo.proto.kernel.v1.OpSpec;
import dev.jitzoo.proto.space.v1.ComposeResponse;
import dev.jitzoo.proto.zoo.v1.Settlement;
import dev.jitzoo.proto.zoo.v1.SimilarRequest;
import dev.jitzoo.proto.zoo.v1.ZooServiceGrpc;
import dev.jitzoo.space.device.DeviceProfiles;
import dev.jitzoo.space.extended.ExtendedSpace;
import dev.jitzoo.space.extended.ZooLookup;
import dev.jitzoo.space.lite.LiteSpace;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.StatusRuntimeException;
import java.io.PrintWriter;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code ./jitzoo space}: the lite space of one op on one device, as JSON, without servers. */
@Command(name = "space", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"Prints the lite kernel space of an op on a device, as JSON; with --zoo, the extended space",
                "as gRPC Compose returns it (a running zoo's best kernels of similar devices first)."},
        subcommands = {SizeCommand.class, CasesCommand.class, DynamicCommand.class, PrimitivesCommand.class},
        footer = {"", "Examples:", "  ./jitzoo space --backend wasm --op K0 --device this-machine-wasm",
                "  ./jitzoo space --backend webgpu --op matmul --shape 384,768,768 --device nvidia-ampere-webgpu",
                "  ./jitzoo space --op matmul --shape 128,256,96 --fingerprint F --zoo 127.0.0.1:8083",
                "", "Bundled devices: this-machine-wasm, nvidia-ampere-webgpu, intel-gen9-webgpu, arm-mali-webgpu"})
public final class SpaceCli implements Callable<Integer> {

    @Spec
    CommandSpec command;


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

    @Option(names = "--zoo", paramLabel = "HOST:PORT",
            description = "a running zoo's gRPC address: the extended space (similar devices' bests first) as Compose sends it")
    String zoo;

    @Option(names = "--fingerprint", description = "the device kind to look up in the zoo (default: the profile's)")
    String fingerprint;

    @Override
    public Integer call() throws Exception {
        PrintWriter stdout = command.commandLine().getOut();
        DeviceProfile profile = DeviceProfiles.load(device);
        if (fingerprint != null) {
            profile = profile.toBuilder().setFingerprint(fingerprint).build();
        }
        OpSpec spec = OpNames.parse(op, shape);
        Backend target = backend(backend);
        LiteSpace lite = new LiteSpace(relaxation, max);
        ComposeResponse space = lite.compose(spec, profile, target);
        if (zoo != null) {
            space = new ExtendedSpace(Settlement.SETTLEMENT_ORIGINS_VALUE)
                    .extend(space, askZoo(spec, profile, target, space), spec, profile, target);
        }
        stdout.println(JsonFormat.printer().omittingInsignificantWhitespace().print(space));
        stdout.flush();
        return 0;
    }

    /** The zoo's similar devices for the op, or why they could not be had. */
    private ExtendedSpace.ZooAnswer askZoo(OpSpec spec, DeviceProfile profile, Backend target, ComposeResponse lite) {
        if (profile.getFingerprint().isBlank()) {
            return ExtendedSpace.ZooAnswer.unavailable("the device has no fingerprint to look up (--fingerprint)");
        }
        return new BlockingZoo(zoo).similar(ExtendedSpace.similarRequest(lite, spec, profile, target)).toCompletableFuture().join();
    }

    /** The space's zoo port over a blocking gRPC stub, for one call from the command line. */
    private record BlockingZoo(String target) implements ZooLookup {
        @Override
        public CompletionStage<ExtendedSpace.ZooAnswer> similar(SimilarRequest request) {
            ManagedChannel channel = ManagedChannelBuilder.forTarget(target).usePlaintext().build();
            try {
                return CompletableFuture.completedFuture(ExtendedSpace.ZooAnswer.of(ZooServiceGrpc.newBlockingStub(channel)
                        .withDeadlineAfter(5, TimeUnit.SECONDS).similar(request)));
            } catch (StatusRuntimeException e) {
                return CompletableFuture.completedFuture(ExtendedSpace.ZooAnswer.unavailable("the zoo at " + target
                        + " did not answer: " + e.getStatus().getCode() + " (" + e.getStatus().getDescription() + ")"));
            } finally {
                channel.shutdownNow();
            }
        }
    }

    static Backend backend(String name) {
        return switch (name) {
            case "wasm" -> Backend.BACKEND_WASM;
            case "webgpu", "wgsl" -> Backend.BACKEND_WGSL;
            default -> throw new IllegalArgumentException("--backend must be wasm or webgpu, got '" + name + "'");
        };
    }
}
