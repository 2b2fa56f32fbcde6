package dev.jitzoo.gateway;

import dev.jitzoo.localstack.TestInfra;
import dev.jitzoo.proto.codegen.v1.CodegenServiceGrpc;
import dev.jitzoo.proto.codegen.v1.GenerateBatchRequest;
import dev.jitzoo.proto.codegen.v1.GenerateBatchResponse;
import dev.jitzoo.proto.codegen.v1.GenerateRequest;
import dev.jitzoo.proto.codegen.v1.GenerateResponse;
import dev.jitzoo.proto.kernel.v1.KernelArtifact;
import dev.jitzoo.proto.kernel.v1.KernelRef;
import dev.jitzoo.proto.kernel.v1.OpSpec;
import dev.jitzoo.proto.kernel.v1.Schedule;
import dev.jitzoo.proto.rules.OpRules;
import dev.jitzoo.proto.space.v1.Candidate;
import dev.jitzoo.proto.space.v1.ComposeRequest;
import dev.jitzoo.proto.space.v1.ComposeResponse;
import dev.jitzoo.proto.space.v1.SpaceServiceGrpc;
import dev.jitzoo.proto.zoo.v1.ResolveRequest;
import dev.jitzoo.proto.zoo.v1.ResolveResponse;
import dev.jitzoo.proto.zoo.v1.ResolvedKernel;
import dev.jitzoo.proto.zoo.v1.ZooServiceGrpc;
import grpc.health.v1.HealthGrpc;
import grpc.health.v1.HealthOuterClass.HealthCheckRequest;
import grpc.health.v1.HealthOuterClass.HealthCheckResponse;
import io.grpc.Metadata;
import io.grpc.Server;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.StreamObserver;
import io.quarkus.test.common.QuarkusTestResourceLifecycleManager;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * The zoo, space and codegen services as one small gRPC server whose codegen misbehaves on cue,
 * for the gateway's tests of downstream faults. The zoo knows nothing; the space offers
 * {@link #CANDIDATES} schedules per op; codegen's stream behaves by the op's M:
 * {@link #REFUSING_M} refuses its second request, {@link #STALLING_M} sends two kernels and then
 * nothing, never ending; {@link #SLOW_M} waits {@link #SLOW} before it answers; any other M
 * generates every request. Also points the gateway at the
 * real Kafka and Redis (see {@link TestInfra}). Keeps the W3C {@code traceparent} each call came
 * with, by method ({@link #traceparents}).
 */
public class FakeDownstreams implements QuarkusTestResourceLifecycleManager {

    static final int CANDIDATES = 6;
    static final int REFUSING_M = 11;
    static final int STALLING_M = 22;
    static final int SLOW_M = 33;
    /** How long codegen thinks before it answers a request of {@link #SLOW_M}. */
    static final java.time.Duration SLOW = java.time.Duration.ofMillis(600);

    private static final Metadata.Key<String> TRACEPARENT = Metadata.Key.of("traceparent", Metadata.ASCII_STRING_MARSHALLER);
    private static final Map<String, List<String>> TRACEPARENTS = new ConcurrentHashMap<>();
    private static final Set<String> TENANTS = ConcurrentHashMap.newKeySet();
    private static final Map<Integer, java.util.concurrent.atomic.AtomicInteger> GENERATED = new ConcurrentHashMap<>();
    private static final Map<Integer, java.util.concurrent.atomic.AtomicInteger> COMPOSED = new ConcurrentHashMap<>();

    private Server server;

    /** The traceparent headers of the calls to a method ("jitzoo.zoo.v1.ZooService/Resolve"), in order. */
    static List<String> traceparents(String method) {
        return TRACEPARENTS.getOrDefault(method, List.of());
    }

    /** Kernels codegen was asked for (Generate and GenerateBatch alike) of MatMuls of M rows. */
    static int generated(int m) {
        java.util.concurrent.atomic.AtomicInteger count = GENERATED.get(m);
        return count == null ? 0 : count.get();
    }

    /** Composes the space was asked for MatMuls of M rows. */
    static int composed(int m) {
        java.util.concurrent.atomic.AtomicInteger count = COMPOSED.get(m);
        return count == null ? 0 : count.get();
    }

    /** Every "Resolve TENANT" and "Compose TENANT" the zoo and the space were asked for. */
    static Set<String> tenantsAsked() {
        return TENANTS;
    }

    @Override
    public Map<String, String> start() {
        try {
            server = NettyServerBuilder.forPort(0).addService(new Zoo()).addService(new Space()).addService(new Codegen())
                    .addService(new Health()).intercept(new TraceparentLog()).build().start();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        Map<String, String> config = new java.util.HashMap<>(Map.of("kafka.bootstrap.servers", TestInfra.kafkaBootstrap(),
                "jitzoo.redis.uri", TestInfra.redisUri(), "quarkus.mongodb.connection-string", TestInfra.mongoUri()));
        for (String client : new String[] {"zoo", "space", "codegen"}) {
            // in tests Quarkus' gRPC clients dial their test-port
            config.put("quarkus.grpc.clients." + client + ".port", String.valueOf(server.getPort()));
            config.put("quarkus.grpc.clients." + client + ".test-port", String.valueOf(server.getPort()));
        }
        return config;
    }

    @Override
    public void stop() {
        server.shutdownNow();
    }

    /** The kernel id codegen gives an op's schedule. */
    static String kernelId(OpSpec op, Schedule schedule) {
        return "fake-" + OpRules.key(op) + "-x" + schedule.getX0();
    }

    private static final class TraceparentLog implements ServerInterceptor {
        @Override
        public <Q, A> ServerCall.Listener<Q> interceptCall(ServerCall<Q, A> call, Metadata headers, ServerCallHandler<Q, A> next) {
            String traceparent = headers.get(TRACEPARENT);
            if (traceparent != null) {
                TRACEPARENTS.computeIfAbsent(call.getMethodDescriptor().getFullMethodName(), m -> new CopyOnWriteArrayList<>())
                        .add(traceparent);
            }
            return next.startCall(call, headers);
        }
    }

    /** Every service serving, as grpc.health.v1 says it. */
    private static final class Health extends HealthGrpc.HealthImplBase {
        @Override
        public void check(HealthCheckRequest request, StreamObserver<HealthCheckResponse> answer) {
            answer.onNext(HealthCheckResponse.newBuilder().setStatus(HealthCheckResponse.ServingStatus.SERVING).build());
            answer.onCompleted();
        }
    }

    private static final class Zoo extends ZooServiceGrpc.ZooServiceImplBase {
        @Override
        public void resolve(ResolveRequest request, StreamObserver<ResolveResponse> answer) {
            TENANTS.add("Resolve " + request.getTenant());
            ResolveResponse.Builder response = ResolveResponse.newBuilder();
            request.getOpsList().forEach(op -> response.addKernels(ResolvedKernel.newBuilder().setOp(op)));
            answer.onNext(response.build());
            answer.onCompleted();
        }
    }

    private static final class Space extends SpaceServiceGrpc.SpaceServiceImplBase {
        @Override
        public void compose(ComposeRequest request, StreamObserver<ComposeResponse> answer) {
            TENANTS.add("Compose " + request.getTenant());
            COMPOSED.computeIfAbsent(request.getOp().getShape(0), m -> new java.util.concurrent.atomic.AtomicInteger()).incrementAndGet();
            ComposeResponse.Builder response = ComposeResponse.newBuilder();
            for (int x0 = 1; x0 <= CANDIDATES; x0++) {
                response.addCandidates(Candidate.newBuilder().setSchedule(Schedule.newBuilder().setY0(1).setX0(x0)).setScore(-x0));
            }
            answer.onNext(response.build());
            answer.onCompleted();
        }
    }

    private static final class Codegen extends CodegenServiceGrpc.CodegenServiceImplBase {
        @Override
        public void generate(GenerateRequest request, StreamObserver<GenerateResponse> answer) {
            thinkIfSlow(request.getOp().getShape(0));
            answer.onNext(generated(request));
            answer.onCompleted();
        }

        @Override
        public void generateBatch(GenerateBatchRequest batch, StreamObserver<GenerateBatchResponse> answer) {
            int m = batch.getRequests(0).getOp().getShape(0);
            thinkIfSlow(m);
            for (int i = 0; i < batch.getRequestsCount(); i++) {
                if (m == STALLING_M && i == 2) {
                    return; // the stream stays open and silent
                }
                GenerateBatchResponse.Builder response = GenerateBatchResponse.newBuilder().setIndex(i);
                if (m == REFUSING_M && i == 1) {
                    response.setRefused("requests[1]: no kernel for this schedule");
                } else {
                    response.setResult(generated(batch.getRequests(i)));
                }
                answer.onNext(response.build());
            }
            answer.onCompleted();
        }

        private static void thinkIfSlow(int m) {
            if (m == SLOW_M) {
                try {
                    Thread.sleep(SLOW.toMillis());
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        }

        private static GenerateResponse generated(GenerateRequest request) {
            GENERATED.computeIfAbsent(request.getOp().getShape(0), m -> new java.util.concurrent.atomic.AtomicInteger()).incrementAndGet();
            KernelRef ref = KernelRef.newBuilder().setKernelId(kernelId(request.getOp(), request.getSchedule())).setOp(request.getOp())
                    .setSchedule(request.getSchedule()).setBackend(request.getBackend()).setAbiVersion(1).build();
            return GenerateResponse.newBuilder().setArtifact(KernelArtifact.newBuilder().setRef(ref).setWasm(
                    com.google.protobuf.ByteString.copyFrom(new byte[] {0, 'a', 's', 'm', 1, 0, 0, 0}))).build();
        }
    }
}
