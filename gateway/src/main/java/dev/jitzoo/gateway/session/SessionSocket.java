package dev.jitzoo.gateway.session;

import dev.jitzoo.gateway.GatewayConfig;
import dev.jitzoo.gateway.jit.KernelSources;
import dev.jitzoo.gateway.reports.ReportPublisher;
import dev.jitzoo.proto.gateway.v1.ClientFrame;
import dev.jitzoo.proto.gateway.v1.Error;
import dev.jitzoo.proto.gateway.v1.Hello;
import dev.jitzoo.proto.gateway.v1.KernelOffer;
import dev.jitzoo.proto.gateway.v1.Microbench;
import dev.jitzoo.proto.gateway.v1.MicrobenchAck;
import dev.jitzoo.proto.gateway.v1.OffersDone;
import dev.jitzoo.proto.gateway.v1.PlanRequest;
import dev.jitzoo.proto.gateway.v1.Report;
import dev.jitzoo.proto.gateway.v1.ReportAck;
import dev.jitzoo.proto.gateway.v1.ServerFrame;
import dev.jitzoo.proto.gateway.v1.Welcome;
import dev.jitzoo.proto.zoo.v1.KernelReport;
import dev.jitzoo.proto.zoo.v1.MicrobenchReport;
import io.quarkus.websockets.next.CloseReason;
import io.quarkus.websockets.next.OnBinaryMessage;
import io.quarkus.websockets.next.OnClose;
import io.quarkus.websockets.next.OnTextMessage;
import io.quarkus.websockets.next.WebSocket;
import io.quarkus.websockets.next.WebSocketConnection;
import io.smallrye.mutiny.Uni;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.smallrye.mutiny.subscription.Cancellable;
import java.util.List;
import java.util.function.Consumer;
import org.jboss.logging.Logger;

/**
 * The browser's WebSocket: one binary protobuf frame per message. Converts frames, finds each
 * connection's {@link Session} in the {@link SessionRegistry}, and hands the work to
 * {@link KernelSources} and {@link ReportPublisher}. A bad frame costs only its own session.
 */
@WebSocket(path = "/v1/session")
public class SessionSocket {

    private static final Logger LOG = Logger.getLogger(SessionSocket.class);

    private final KernelSources kernels;
    private final ReportPublisher publisher;
    private final GatewayConfig config;
    private final FrameRules rules;
    private final SessionRegistry registry;

    public SessionSocket(KernelSources kernels, ReportPublisher publisher, GatewayConfig config, SessionRegistry registry) {
        this.kernels = kernels;
        this.publisher = publisher;
        this.config = config;
        this.registry = registry;
        this.rules = new FrameRules(config.maxFrameBytes(), config.maxOpsPerSession(), config.maxOperandElements(),
                config.maxDynamicRows());
    }

    @OnBinaryMessage
    public Uni<Void> onFrame(byte[] message, WebSocketConnection connection) {
        try {
            ClientFrame frame = rules.parse(message);
            Session session = registry.session(connection.id());
            return switch (frame.getFrameCase()) {
                case HELLO -> onHello(frame.getHello(), session, connection);
                case CREDIT -> {
                    requireSession(session, "Credit");
                    registry.update(session, s -> s.grant(frame.getCredit().getCredits()));
                    yield flush(session, connection);
                }
                case REPORT -> onReport(frame.getReport(), requireSession(session, "Report"), connection);
                case MICROBENCH -> onMicrobench(frame.getMicrobench(), requireSession(session, "Microbench"), connection);
                case PLAN_REQUEST -> onPlanRequest(frame.getPlanRequest(), connection);
                case FRAME_NOT_SET -> throw ProtocolException.malformed("frame carries no known message");
            };
        } catch (ProtocolException e) {
            return refuse(e, connection);
        }
    }

    @OnTextMessage
    public Uni<Void> onText(String message, WebSocketConnection connection) {
        return refuse(ProtocolException.malformed("text messages are not spoken here: send binary ClientFrame protobuf"),
                connection);
    }

    @OnClose
    public void onClose(WebSocketConnection connection) {
        registry.close(connection.id());
    }

    private Uni<Void> onHello(Hello hello, Session existing, WebSocketConnection connection) {
        if (existing != null) {
            throw ProtocolException.protocol("Hello was sent twice");
        }
        rules.checkHello(hello);
        Session session = registry.open(connection.id(), hello);
        LOG.infof("session %s: device %s, %d ops", session.id(), hello.getDevice().getFingerprint(), hello.getOpsCount());
        return kernels.start(hello)
                .call(start -> {
                    registry.update(session, s -> start.initial().forEach(k -> s.issue(k.getArtifact().getRef())));
                    return send(connection, ServerFrame.newBuilder().setWelcome(Welcome.newBuilder()
                            .setSessionId(session.id()).addAllInitial(start.initial())).build());
                })
                .invoke(start -> startGeneration(session, start, connection))
                .replaceWithVoid()
                .onFailure(f -> !(f instanceof ProtocolException))
                .transform(f -> ProtocolException.unavailable("kernel services unavailable: " + f.getMessage()))
                .onFailure(ProtocolException.class).recoverWithUni(f -> refuse((ProtocolException) f, connection));
    }

    private void startGeneration(Session session, KernelSources.Start start, WebSocketConnection connection) {
        Cancellable running = kernels.candidates(session.hello(), start.offers())
                .onItem().transformToUniAndConcatenate(offer -> {
                    registry.update(session, s -> s.enqueue(KernelOffer.newBuilder()
                            .setArtifact(offer.artifact()).setRank(offer.rank()).setFromZoo(offer.fromZoo()).build()));
                    return flush(session, connection);
                })
                .subscribe().with(
                        ignored -> { },
                        failure -> {
                            LOG.warnf("session %s: generation failed: %s", session.id(), failure.toString());
                            refuse(ProtocolException.unavailable("kernel generation failed: " + failure.getMessage()),
                                    connection).subscribe().with(v -> { }, e -> { });
                        },
                        () -> {
                            registry.update(session, Session::markGenerationDone);
                            flush(session, connection).subscribe().with(v -> { }, e -> { });
                        });
        registry.generating(connection.id(), running);
    }

    /** Sends what the client's credit allows, then OffersDone once everything went out. */
    private Uni<Void> flush(Session session, WebSocketConnection connection) {
        record Due(List<KernelOffer> sendable, boolean done, int sent) {
        }
        Due due = registry.read(session, s -> new Due(s.takeSendable(), s.takeDone(), s.offersSent()));
        Uni<Void> chain = Uni.createFrom().voidItem();
        for (KernelOffer offer : due.sendable()) {
            chain = chain.chain(() -> send(connection, ServerFrame.newBuilder().setOffer(offer).build()));
        }
        if (due.done()) {
            int sent = due.sent();
            chain = chain.chain(() -> send(connection, ServerFrame.newBuilder()
                    .setOffersDone(OffersDone.newBuilder().setOffersSent(sent)).build()));
        }
        return chain;
    }

    /** Needs no session: a plan is a pure function of the device and the op. A request the space refuses is answered with its reason. */
    private Uni<Void> onPlanRequest(PlanRequest request, WebSocketConnection connection) {
        int count = registry.countPlanRequest(connection.id());
        if (count > config.maxPlanRequests()) {
            throw ProtocolException.protocol("more than " + config.maxPlanRequests() + " PlanRequests on one connection");
        }
        rules.checkPlanRequest(request);
        return kernels.dynamicPlan(request)
                .chain(plan -> send(connection, ServerFrame.newBuilder().setDynamicPlan(plan).build()))
                .onFailure().recoverWithUni(f -> refuse(planFailure(f), connection));
    }

    private static ProtocolException planFailure(Throwable f) {
        if (f instanceof StatusRuntimeException e && e.getStatus().getCode() == Status.Code.INVALID_ARGUMENT) {
            return ProtocolException.invalidPlanRequest(e.getStatus().getDescription());
        }
        LOG.warnf("plan request not answered: %s", f.toString());
        return ProtocolException.unanswered("the space service did not answer the plan request: " + f.getMessage());
    }

    private Uni<Void> onReport(Report report, Session session, WebSocketConnection connection) {
        KernelReport accepted = registry.read(session,
                s -> s.acceptReport(report, config.maxRankedPerReport(), System.currentTimeMillis()));
        return publishThenAck(publisher.publish(accepted),
                ServerFrame.newBuilder().setReportAck(ReportAck.newBuilder().setOp(report.getOp())).build(),
                "report", s -> s.withdrawReport(report), session, connection);
    }

    private Uni<Void> onMicrobench(Microbench microbench, Session session, WebSocketConnection connection) {
        MicrobenchReport accepted = registry.read(session, s -> s.acceptMicrobench(microbench, System.currentTimeMillis()));
        return publishThenAck(publisher.publish(accepted),
                ServerFrame.newBuilder().setMicrobenchAck(MicrobenchAck.getDefaultInstance()).build(),
                "microbenchmark", Session::withdrawMicrobench, session, connection);
    }

    /** Acknowledges once the broker has the record; if it cannot, says so and lets the client send it again. */
    private Uni<Void> publishThenAck(Uni<Void> published, ServerFrame ack, String what, Consumer<Session> withdraw,
                                     Session session, WebSocketConnection connection) {
        return published.chain(() -> send(connection, ack))
                .onFailure().recoverWithUni(f -> {
                    LOG.warnf("session %s: %s not published: %s", session.id(), what, f.toString());
                    registry.update(session, withdraw);
                    return send(connection, error(ProtocolException.unavailable(what + " not stored, try again later")));
                });
    }

    private static Session requireSession(Session session, String frame) {
        if (session == null) {
            throw ProtocolException.protocol(frame + " before Hello");
        }
        return session;
    }

    private Uni<Void> refuse(ProtocolException e, WebSocketConnection connection) {
        LOG.debugf("connection %s: %s", connection.id(), e.getMessage());
        Uni<Void> sent = send(connection, error(e)).onFailure().recoverWithNull();
        if (!e.fatal()) {
            return sent;
        }
        return sent.chain(() -> connection.close(new CloseReason(e.closeCode(), closeReason(e.getMessage()))));
    }

    private static ServerFrame error(ProtocolException e) {
        return ServerFrame.newBuilder().setError(Error.newBuilder().setCode(e.code()).setMessage(e.getMessage())).build();
    }

    private static Uni<Void> send(WebSocketConnection connection, ServerFrame frame) {
        return connection.sendBinary(frame.toByteArray());
    }

    /** A close reason must fit in 123 bytes of UTF-8. */
    private static String closeReason(String message) {
        String reason = message;
        while (reason.getBytes(java.nio.charset.StandardCharsets.UTF_8).length > 123) {
            reason = reason.substring(0, reason.length() - 2);
        }
        return reason;
    }
}
