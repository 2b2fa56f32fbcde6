package dev.jitzoo.gateway.jit;

import dev.jitzoo.gateway.GatewayConfig;
import dev.jitzoo.proto.codegen.v1.CodegenService;
import dev.jitzoo.proto.codegen.v1.GenerateBatchRequest;
import dev.jitzoo.proto.codegen.v1.GenerateRequest;
import dev.jitzoo.proto.codegen.v1.GenerateResponse;
import dev.jitzoo.proto.gateway.v1.Hello;
import dev.jitzoo.proto.gateway.v1.InitialKernel;
import dev.jitzoo.proto.kernel.v1.Backend;
import dev.jitzoo.proto.kernel.v1.KernelArtifact;
import dev.jitzoo.proto.kernel.v1.OpSpec;
import dev.jitzoo.proto.kernel.v1.Schedule;
import dev.jitzoo.proto.rules.OpRules;
import dev.jitzoo.proto.space.v1.Candidate;
import dev.jitzoo.proto.space.v1.CandidateSource;
import dev.jitzoo.proto.space.v1.ComposeRequest;
import dev.jitzoo.proto.space.v1.ComposeResponse;
import dev.jitzoo.proto.space.v1.SpaceService;
import dev.jitzoo.proto.zoo.v1.ResolveRequest;
import dev.jitzoo.proto.zoo.v1.ResolveResponse;
import dev.jitzoo.proto.zoo.v1.ResolvedKernel;
import dev.jitzoo.proto.zoo.v1.ZooService;
import io.quarkus.grpc.GrpcClient;
import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.ArrayList;
import java.util.List;
import org.jboss.logging.Logger;

/**
 * Where a session's kernels come from: the zoo's best (or a safe default) for the Welcome, then
 * the space's ordered candidates compiled by codegen, streamed as they are generated.
 */
@ApplicationScoped
public class KernelSources {

    private static final Logger LOG = Logger.getLogger(KernelSources.class);

    /** The default when the zoo knows nothing: one row, one SIMD vector, valid for any shape. */
    static final Schedule SAFE_DEFAULT = Schedule.newBuilder().setY0(1).setX0(4).setVectorize(true).build();

    /**
     * The safe default of an op: {@link #SAFE_DEFAULT} for matmuls (a transposed B read packed, the
     * only way a vector reads it), plain SIMD for the ops a schedule only vectorizes.
     */
    static Schedule safeDefault(OpSpec op) {
        if (!OpRules.isMatmul(op.getKind())) {
            return Schedule.newBuilder().setVectorize(true).build();
        }
        return op.getTransposeB() ? SAFE_DEFAULT.toBuilder().setPackB(true).build() : SAFE_DEFAULT;
    }

    private final ZooService zoo;
    private final SpaceService space;
    private final CodegenService codegen;
    private final GatewayConfig config;

    public KernelSources(@GrpcClient("zoo") ZooService zoo,
                         @GrpcClient("space") SpaceService space,
                         @GrpcClient("codegen") CodegenService codegen,
                         GatewayConfig config) {
        this.zoo = zoo;
        this.space = space;
        this.codegen = codegen;
        this.config = config;
    }

    /**
     * One initial kernel per op. A zoo that does not answer costs the session its head start,
     * not its inference: the safe default is used instead.
     */
    public Uni<List<InitialKernel>> initialKernels(Hello hello) {
        ResolveRequest request = ResolveRequest.newBuilder()
                .setDevice(hello.getDevice()).setBackend(hello.getBackend()).addAllOps(hello.getOpsList()).build();
        return zoo.resolve(request)
                .ifNoItem().after(config.rpcTimeout()).fail()
                .onFailure().recoverWithItem(failure -> {
                    LOG.warnf("zoo unavailable, starting from defaults: %s", failure.toString());
                    return ResolveResponse.getDefaultInstance();
                })
                .chain(resolved -> {
                    List<Uni<InitialKernel>> initial = new ArrayList<>();
                    for (int i = 0; i < hello.getOpsCount(); i++) {
                        OpSpec op = hello.getOps(i);
                        ResolvedKernel known = i < resolved.getKernelsCount() ? resolved.getKernels(i) : null;
                        boolean fromZoo = known != null && known.getFound() && known.getKernel().getOp().equals(op);
                        Schedule schedule = fromZoo ? known.getKernel().getSchedule() : safeDefault(op);
                        initial.add(generate(request(hello, op, schedule))
                                .map(artifact -> InitialKernel.newBuilder()
                                        .setArtifact(artifact).setFromZoo(fromZoo).build()));
                    }
                    return Uni.join().all(initial).andFailFast();
                });
    }

    /**
     * Every candidate of every op, compiled and streamed round-robin over the ops (every op's first,
     * then every op's second, ...), so a model's ops all improve from the start rather than one
     * after another; within an op, the space's order.
     */
    public Multi<Offer> candidates(Hello hello) {
        List<Uni<ComposeResponse>> spaces = hello.getOpsList().stream()
                .map(op -> space.compose(ComposeRequest.newBuilder()
                                .setOp(op).setDevice(hello.getDevice()).setBackend(hello.getBackend()).build())
                        .ifNoItem().after(config.rpcTimeout()).fail())
                .toList();
        return Uni.join().all(spaces).andFailFast().onItem().transformToMulti(composed -> {
            List<Planned> order = roundRobin(hello.getOpsList(), composed);
            if (order.isEmpty()) {
                return Multi.createFrom().empty();
            }
            GenerateBatchRequest.Builder batch = GenerateBatchRequest.newBuilder();
            for (Planned planned : order) {
                batch.addRequests(request(hello, planned.op(), planned.candidate().getSchedule()));
            }
            return codegen.generateBatch(batch.build()).map(generated -> {
                Planned planned = order.get(generated.getIndex());
                return new Offer(generated.getResult().getArtifact(), planned.rank(),
                        planned.candidate().getSource() == CandidateSource.CANDIDATE_SOURCE_EXPLOITATION);
            });
        });
    }

    /** One candidate of one op, with its place in that op's ordering. */
    record Planned(OpSpec op, int rank, Candidate candidate) {
    }

    /** Rank 0 of every op in Hello order, then rank 1 of every op that has one, and so on. */
    static List<Planned> roundRobin(List<OpSpec> ops, List<ComposeResponse> spaces) {
        List<Planned> order = new ArrayList<>();
        int longest = spaces.stream().mapToInt(ComposeResponse::getCandidatesCount).max().orElse(0);
        for (int rank = 0; rank < longest; rank++) {
            for (int i = 0; i < ops.size(); i++) {
                if (rank < spaces.get(i).getCandidatesCount()) {
                    order.add(new Planned(ops.get(i), rank, spaces.get(i).getCandidates(rank)));
                }
            }
        }
        return order;
    }

    /**
     * A generated candidate, its place in its op's ordering, and whether it is a similar device's
     * best from the zoo (the exploitation set) rather than the lite space's own.
     */
    public record Offer(KernelArtifact artifact, int rank, boolean fromZoo) {
    }

    private Uni<KernelArtifact> generate(GenerateRequest request) {
        return codegen.generate(request).ifNoItem().after(config.rpcTimeout()).fail()
                .map(GenerateResponse::getArtifact);
    }

    /** WGSL kernels are made for the limits the device's adapter reported. */
    private static GenerateRequest request(Hello hello, OpSpec op, Schedule schedule) {
        GenerateRequest.Builder request = GenerateRequest.newBuilder().setOp(op).setSchedule(schedule).setBackend(hello.getBackend());
        if (hello.getBackend() == Backend.BACKEND_WGSL && hello.getDevice().getWebgpu().hasLimits()) {
            request.setWebgpuLimits(hello.getDevice().getWebgpu().getLimits());
        }
        return request.build();
    }
}
