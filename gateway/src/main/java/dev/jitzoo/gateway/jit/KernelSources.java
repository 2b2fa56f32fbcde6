package dev.jitzoo.gateway.jit;

import dev.jitzoo.gateway.GatewayConfig;
import dev.jitzoo.proto.codegen.v1.CodegenService;
import dev.jitzoo.proto.codegen.v1.GenerateBatchRequest;
import dev.jitzoo.proto.codegen.v1.GenerateBatchResponse;
import dev.jitzoo.proto.codegen.v1.GenerateRequest;
import dev.jitzoo.proto.codegen.v1.GenerateResponse;
import dev.jitzoo.proto.gateway.v1.DynamicPlan;
import dev.jitzoo.proto.gateway.v1.Hello;
import dev.jitzoo.proto.gateway.v1.PlanRequest;
import dev.jitzoo.proto.gateway.v1.InitialKernel;
import dev.jitzoo.proto.kernel.v1.Backend;
import dev.jitzoo.proto.kernel.v1.KernelArtifact;
import dev.jitzoo.proto.kernel.v1.KernelRef;
import dev.jitzoo.proto.kernel.v1.OpSpec;
import dev.jitzoo.proto.kernel.v1.Schedule;
import dev.jitzoo.proto.rules.OpRules;
import dev.jitzoo.proto.rules.ScheduleRules;
import dev.jitzoo.proto.rules.SplitRules;
import dev.jitzoo.proto.space.v1.Candidate;
import dev.jitzoo.proto.space.v1.CandidateSource;
import dev.jitzoo.proto.space.v1.ComposeRequest;
import dev.jitzoo.proto.space.v1.ComposeResponse;
import dev.jitzoo.proto.space.v1.DynamicRequest;
import dev.jitzoo.proto.space.v1.SpaceService;
import dev.jitzoo.proto.zoo.v1.ResolveRequest;
import dev.jitzoo.proto.zoo.v1.ResolveResponse;
import dev.jitzoo.proto.zoo.v1.ResolvedKernel;
import dev.jitzoo.proto.zoo.v1.ZooService;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.Context;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.grpc.GrpcClient;
import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;
import org.jboss.logging.Logger;

/**
 * Where a session's kernels come from: the zoo's best (or a safe default) for the Welcome, then
 * the space's ordered candidates compiled by codegen, streamed as they are generated.
 */
@ApplicationScoped
public class KernelSources {

    private static final Logger LOG = Logger.getLogger(KernelSources.class);
    /** How long a kernel codegen made is served from the gateway's memory. */
    private static final Duration ARTIFACT_TTL = Duration.ofMinutes(10);

    /** The safe default of an op when the zoo knows nothing: {@link ScheduleRules#safeDefault}. */
    static Schedule safeDefault(OpSpec op, Backend backend) {
        return ScheduleRules.safeDefault(op, backend);
    }

    /** The safe default of an op in a session, {@link #forSession as the session runs it}. */
    static Schedule safeDefault(OpSpec op, Hello hello) {
        return forSession(op, safeDefault(op, hello.getBackend()), hello);
    }

    /**
     * A schedule as the session runs it: on Wasm split for the device's threads (or unsplit on one),
     * as every kernel of the session must be, whatever thread count the zoo's elected one was made for.
     */
    static Schedule forSession(OpSpec op, Schedule schedule, Hello hello) {
        return hello.getBackend() == Backend.BACKEND_WASM
                ? SplitRules.forThreads(op, schedule, hello.getDevice().getWasm().getThreadsUsed()) : schedule;
    }

    private final ZooService zoo;
    private final SpaceService space;
    private final CodegenService codegen;
    private final GatewayConfig config;
    private final Tracer tracer;
    private final ArtifactCache artifacts;
    private final ComposeCache spaceAnswers;
    private final InFlight<GenerateRequest, KernelArtifact> kernelCalls;
    private final InFlight<List<GenerateRequest>, GenerateBatchResponse> batchCalls;

    public KernelSources(@GrpcClient("zoo") ZooService zoo,
                         @GrpcClient("space") SpaceService space,
                         @GrpcClient("codegen") CodegenService codegen,
                         GatewayConfig config, Tracer tracer, MeterRegistry metrics) {
        this.artifacts = new ArtifactCache(config.artifactCacheBytes(), ARTIFACT_TTL, metrics);
        this.spaceAnswers = new ComposeCache(config.composeCacheTtl(), metrics);
        this.kernelCalls = new InFlight<>("generate", metrics);
        this.batchCalls = new InFlight<>("generate_batch", metrics);
        this.zoo = zoo;
        this.space = space;
        this.codegen = codegen;
        this.config = config;
        this.tracer = tracer;
    }

    /**
     * A new trace for a session's start ({@code jitzoo.session.hello} or {@code jitzoo.session.resume}),
     * its root: the browser sends no trace context.
     */
    public SessionTrace trace(String name, String sessionId, Hello hello) {
        Span span = tracer.spanBuilder(name).setSpanKind(SpanKind.SERVER).setNoParent()
                .setAttribute("jitzoo.session.id", sessionId)
                .setAttribute("jitzoo.device.fingerprint", hello.getDevice().getFingerprint())
                .setAttribute("jitzoo.backend", hello.getBackend().name())
                .setAttribute("jitzoo.ops", hello.getOpsCount())
                .startSpan();
        return new SessionTrace(span, Context.root().with(span));
    }

    /**
     * What a session starts with: one initial kernel per op for the Welcome, and the candidates
     * still to offer (the space's, less each op's initial one), composed once for both.
     */
    public record Start(List<InitialKernel> initial, Uni<List<Planned>> offers, double kindPeakGflops) {
    }

    /**
     * The Welcome's kernels, and what to offer after them. Per op: the zoo's elected kernel for the
     * device kind (as the space's answer carries it: one round trip to the zoo per Hello; the
     * gateway asks the zoo itself only when the space does not answer); else the lite space's first
     * candidate for this device (the Table 1 model's best guess, so a new kind starts near the end
     * of its tuning, not far from it); else the safe default. A zoo or space that does not answer costs the
     * session its head start, not its inference; a first candidate that does not generate gives
     * way to the safe default. With them, the device kind's peak as the zoo measured it (0 when it
     * did not, or did not answer): the session's reports are held to the ceiling it implies.
     */
    public Uni<Start> start(Hello hello, String tenant, SessionTrace trace) {
        Uni<List<ComposeResponse>> spaces = compose(hello, tenant, trace).memoize().indefinitely();
        Uni<Optional<List<ComposeResponse>>> spacesOrNone = spaces.map(Optional::of).onFailure().recoverWithItem(failure -> {
            LOG.warnf("space unavailable, starting from the zoo's kernels and safe defaults: %s", failure.toString());
            return Optional.empty();
        });
        return spacesOrNone.chain(composed -> (composed.isPresent() ? Uni.createFrom().item(elections(composed.get()))
                : resolve(hello, tenant, trace)).chain(resolved -> {
            List<Schedule> first = new ArrayList<>();
            List<Uni<InitialKernel>> initial = new ArrayList<>();
            for (int i = 0; i < hello.getOpsCount(); i++) {
                OpSpec op = hello.getOps(i);
                Optional<Schedule> elected = elected(resolved, i, op);
                ComposeResponse space = composed.isPresent() ? composed.get().get(i) : null;
                Schedule schedule = forSession(op, elected.or(() -> firstOwnCandidate(space))
                        .orElse(safeDefault(op, hello.getBackend())), hello);
                first.add(schedule);
                initial.add(generateOrSafeDefault(hello, op, schedule, trace)
                        .map(a -> InitialKernel.newBuilder().setArtifact(a).setFromZoo(elected.isPresent()).build()));
            }
            List<Set<Schedule>> given = first.stream().map(Set::of).toList();
            double kindPeak = resolved.getKernelsList().stream().mapToDouble(ResolvedKernel::getKindPeakGflops).max().orElse(0);
            return Uni.join().all(initial).andFailFast()
                    .map(kernels -> new Start(kernels, spaces.map(c -> roundRobin(hello.getOpsList(), c, given)), kindPeak));
        }));
    }

    /**
     * A report of the session's op is stored: the space's answers kept for its device kind that
     * carry no election are asked again at the next Hello, which then starts on the election the
     * report may bring ({@link ComposeCache#reported}).
     */
    public void reported(Hello hello, String tenant) {
        spaceAnswers.reported(tenant, hello.getDevice(), hello.getBackend());
    }

    /** The elections the space's answers carry (the zoo's Similar, asked once per op): a Hello's one round trip to the zoo. */
    private static ResolveResponse elections(List<ComposeResponse> composed) {
        ResolveResponse.Builder resolved = ResolveResponse.newBuilder();
        composed.forEach(c -> resolved.addKernels(c.getOwn()));
        return resolved.build();
    }

    /** Asks the zoo itself, when the space did not answer: its elections still start the session. */
    private Uni<ResolveResponse> resolve(Hello hello, String tenant, SessionTrace trace) {
        ResolveRequest request = ResolveRequest.newBuilder().setTenant(tenant)
                .setDevice(hello.getDevice()).setBackend(hello.getBackend()).addAllOps(hello.getOpsList()).build();
        return trace.within(zoo.resolve(request))
                .ifNoItem().after(config.rpcTimeout()).fail()
                .onFailure().recoverWithItem(failure -> {
                    LOG.warnf("zoo unavailable too, starting from safe defaults: %s", failure.toString());
                    return ResolveResponse.getDefaultInstance();
                });
    }

    /** The zoo's elected schedule for the i-th op of a Resolve, if it found one for exactly that op. */
    private static Optional<Schedule> elected(ResolveResponse resolved, int i, OpSpec op) {
        if (i >= resolved.getKernelsCount()) {
            return Optional.empty();
        }
        ResolvedKernel known = resolved.getKernels(i);
        return known.getFound() && known.getKernel().getOp().equals(op) ? Optional.of(known.getKernel().getSchedule()) : Optional.empty();
    }

    /** A kernel of the schedule, or of the safe default when that one does not generate. */
    private Uni<KernelArtifact> generateOrSafeDefault(Hello hello, OpSpec op, Schedule schedule, SessionTrace trace) {
        Uni<KernelArtifact> artifact = generate(request(hello, op, schedule), trace);
        Schedule safe = safeDefault(op, hello);
        if (schedule.equals(safe)) {
            return artifact;
        }
        return artifact.onFailure().recoverWithUni(failure -> {
            LOG.warnf("initial kernel of %s did not generate, using the safe default: %s", op.getKind(), failure.toString());
            return generate(request(hello, op, safe), trace);
        });
    }

    /** The lite space's own first candidate (after the exploitation set: those stay offers, sent first). */
    static Optional<Schedule> firstOwnCandidate(ComposeResponse space) {
        if (space == null) {
            return Optional.empty();
        }
        return space.getCandidatesList().stream()
                .filter(c -> c.getSource() != CandidateSource.CANDIDATE_SOURCE_EXPLOITATION)
                .map(Candidate::getSchedule).findFirst();
    }

    private Uni<List<ComposeResponse>> compose(Hello hello, String tenant, SessionTrace trace) {
        List<Uni<ComposeResponse>> spaces = hello.getOpsList().stream()
                .map(op -> ComposeRequest.newBuilder().setTenant(tenant)
                        .setOp(op).setDevice(hello.getDevice()).setBackend(hello.getBackend()).build())
                .map(request -> spaceAnswers.get(request, () -> trace.within(space.compose(request)).ifNoItem().after(config.rpcTimeout()).fail()))
                .toList();
        return Uni.join().all(spaces).andFailFast();
    }

    /**
     * Every candidate still to offer, compiled and streamed round-robin over the ops (every op's
     * first, then every op's second, ...), so a model's ops all improve from the start rather than
     * one after another; within an op, the space's order. A candidate codegen refuses is skipped.
     * The offers come in lists of those ready together: all at once when every kernel is in the
     * gateway's memory, one by one as codegen makes them otherwise. One batch call runs at a time
     * per list of requests ({@link InFlight}): the sessions of a kind that ask meanwhile join it.
     * Its kernels are taken (and kept in memory) as they come, whoever is left to take them: a
     * session that grants no credit and leaves has still filled the memory for the next of its kind.
     */
    public Multi<List<Offer>> candidates(Hello hello, Uni<List<Planned>> planned, SessionTrace trace) {
        return planned.onItem().transformToMulti(order -> {
            if (order.isEmpty()) {
                return Multi.createFrom().empty();
            }
            List<GenerateRequest> requests = order.stream().map(p -> request(hello, p.op(), p.candidate().getSchedule())).toList();
            Optional<List<KernelArtifact>> kept = artifacts.getAll(requests);
            if (kept.isPresent()) { // a kind many pages share: every offer from memory, in the space's order
                List<Offer> offers = new ArrayList<>(order.size());
                for (int i = 0; i < order.size(); i++) {
                    offers.add(offer(order.get(i), kept.get().get(i)));
                }
                return Multi.createFrom().item(offers);
            }
            return batchCalls.join(requests, () -> trace.within(codegen.generateBatch(GenerateBatchRequest.newBuilder().addAllRequests(requests).build()))
                            // the sessions' own guards end their offers first (SessionSocket.generate): this releases the call
                            .ifNoItem().after(config.rpcTimeout().multipliedBy(2)).fail()
                            .filter(generated -> {
                                if (!generated.getRefused().isEmpty()) {
                                    LOG.infof("candidate skipped, codegen refused it: %s", generated.getRefused());
                                }
                                return generated.hasResult();
                            })
                            .invoke(generated -> artifacts.put(requests.get(generated.getIndex()), generated.getResult().getArtifact())))
                    .map(generated -> List.of(offer(order.get(generated.getIndex()), generated.getResult().getArtifact())));
        });
    }

    private static Offer offer(Planned planned, KernelArtifact artifact) {
        return new Offer(artifact, planned.rank(), planned.candidate().getSource() == CandidateSource.CANDIDATE_SOURCE_EXPLOITATION,
                System.nanoTime());
    }

    /**
     * What a resumed session has still to be offered: the space's candidates of its ops, less
     * those whose kernels it was sent (the Welcome's and the offers it received); none when the
     * space does not answer.
     */
    public Multi<List<Offer>> remaining(Hello hello, String tenant, List<KernelRef> sent, SessionTrace trace) {
        List<Set<Schedule>> given = hello.getOpsList().stream()
                .map(op -> sent.stream().filter(k -> k.getOp().equals(op)).map(KernelRef::getSchedule)
                        .collect(Collectors.toSet()))
                .toList();
        Uni<List<Planned>> planned = compose(hello, tenant, trace).map(composed -> roundRobin(hello.getOpsList(), composed, given))
                .onFailure().recoverWithItem(failure -> {
                    LOG.warnf("space unavailable, a resumed session gets no more offers: %s", failure.toString());
                    return List.of();
                });
        return candidates(hello, planned, trace);
    }

    /**
     * The uKernel set and the plan per extent of a MatMul whose M varies, from the space service.
     * Fails with the space's status (INVALID_ARGUMENT with its reason for a request it cannot serve).
     */
    public Uni<DynamicPlan> dynamicPlan(PlanRequest request) {
        DynamicRequest ask = DynamicRequest.newBuilder().setOp(request.getOp()).setLo(request.getLo()).setHi(request.getHi())
                .setDevice(request.getDevice()).build();
        return space.dynamic(ask).ifNoItem().after(config.rpcTimeout()).fail()
                .map(plans -> DynamicPlan.newBuilder().setOp(request.getOp()).setLo(request.getLo()).setHi(request.getHi())
                        .addAllKernels(plans.getKernelsList()).addAllPlans(plans.getPlansList()).build());
    }

    /** One candidate of one op, with its place in that op's ordering. */
    record Planned(OpSpec op, int rank, Candidate candidate) {
    }

    /**
     * Rank 0 of every op in Hello order, then rank 1 of every op that has one, and so on; an op's
     * candidate with the schedule of a kernel it was given already (`given`, per op: its initial
     * kernel's) is not offered again.
     */
    static List<Planned> roundRobin(List<OpSpec> ops, List<ComposeResponse> spaces, List<Set<Schedule>> given) {
        List<Planned> order = new ArrayList<>();
        int longest = spaces.stream().mapToInt(ComposeResponse::getCandidatesCount).max().orElse(0);
        for (int rank = 0; rank < longest; rank++) {
            for (int i = 0; i < ops.size(); i++) {
                if (rank < spaces.get(i).getCandidatesCount()
                        && !given.get(i).contains(spaces.get(i).getCandidates(rank).getSchedule())) {
                    order.add(new Planned(ops.get(i), rank, spaces.get(i).getCandidates(rank)));
                }
            }
        }
        return order;
    }

    /**
     * A kernel codegen generated, its place in its op's ordering, whether it is a similar device's
     * best from the zoo (the exploitation set) rather than the lite space's own, and when it reached
     * the gateway (System.nanoTime).
     */
    public record Offer(KernelArtifact artifact, int rank, boolean fromZoo, long generatedNs) {
    }

    private Uni<KernelArtifact> generate(GenerateRequest request, SessionTrace trace) {
        Optional<KernelArtifact> kept = artifacts.get(request);
        if (kept.isPresent()) {
            return Uni.createFrom().item(kept.get());
        }
        return kernelCalls.join(request, () -> trace.within(codegen.generate(request)).ifNoItem().after(config.rpcTimeout()).fail()
                .map(GenerateResponse::getArtifact)
                .invoke(artifact -> artifacts.put(request, artifact))
                .toMulti()).toUni();
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
