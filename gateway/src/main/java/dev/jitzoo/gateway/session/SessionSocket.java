package dev.jitzoo.gateway.session;

import static java.nio.charset.StandardCharsets.UTF_8;

import dev.jitzoo.proto.gateway.v1.PlanLimit;
import dev.jitzoo.tenant.Digests;
import dev.jitzoo.gateway.GatewayConfig;
import dev.jitzoo.gateway.jit.KernelSources;
import dev.jitzoo.gateway.jit.SessionTrace;
import dev.jitzoo.gateway.jit.StallGuard;
import dev.jitzoo.gateway.reports.ReportPublisher;
import dev.jitzoo.gateway.tenant.QuotaMeter;
import dev.jitzoo.tenant.Tenant;
import dev.jitzoo.gateway.tenant.Tenants;
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
import dev.jitzoo.proto.gateway.v1.Resume;
import dev.jitzoo.proto.gateway.v1.Resumed;
import dev.jitzoo.proto.gateway.v1.ServerFrame;
import dev.jitzoo.proto.gateway.v1.SessionLimit;
import dev.jitzoo.proto.gateway.v1.Welcome;
import dev.jitzoo.proto.kernel.v1.KernelRef;
import dev.jitzoo.proto.zoo.v1.KernelReport;
import dev.jitzoo.proto.zoo.v1.MicrobenchReport;
import io.netty.handler.codec.http.QueryStringDecoder;
import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.Uni;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.smallrye.mutiny.subscription.Cancellable;
import io.smallrye.common.vertx.VertxContext;
import io.vertx.core.Context;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.ServerWebSocket;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.jboss.logging.Logger;

/**
 * The browser's WebSocket: one binary protobuf frame per message. Converts frames, finds each
 * connection's {@link Session} in the {@link SessionRegistry}, and hands the work to
 * {@link KernelSources} and {@link ReportPublisher}. A bad frame costs only its own session.
 * Sessions are kept in the {@link SessionStore} as they go, so that a client on a new connection
 * resumes its session with the Welcome's token, on this gateway or another, before or after a
 * restart.
 *
 * <p>On Vert.x's own WebSocket (a route of the HTTP server), not an annotated endpoint: a frame is
 * handled on the connection's event loop as it is read, with no context, task or reactive chain
 * of its own, so the frames and acknowledgements of one read go out in one flush. Frames whose
 * answer waits on another service (Hello, Resume, PlanRequest) run on a context of their own
 * (their traces and gRPC calls carry it), and the connection's next frames wait for that answer,
 * read in order.
 */
@ApplicationScoped
public class SessionSocket {

    /** Where browsers connect. */
    private static final String PATH = "/v1/session";

    private static final Logger LOG = Logger.getLogger(SessionSocket.class);
    private static final SecureRandom RANDOM = new SecureRandom();
    /** What a frame handler returns when its answer goes out later, on its own. */
    private static final Uni<Void> ANSWERED_LATER = Uni.createFrom().voidItem();
    private static final AtomicLong CONNECTIONS = new AtomicLong();
    /** What each gateway calls its connections: unique within the process, and across restarts in the logs. */
    private static final String ID_PREFIX = Long.toString(System.currentTimeMillis(), 36) + "-";

    private final RefusalLog refusals = new RefusalLog(LOG);

    private final KernelSources kernels;
    private final ReportPublisher publisher;
    private final GatewayConfig config;
    private final FrameRules rules;
    private final SessionRegistry registry;
    private final SessionStore store;
    private final GatewayMetrics metrics;
    private final Drain drain;
    private final Tenants tenants;
    private final QuotaMeter quotas;
    private final OpenConnections open;

    public SessionSocket(KernelSources kernels, ReportPublisher publisher, GatewayConfig config, SessionRegistry registry,
                         SessionStore store, GatewayMetrics metrics, Drain drain, Tenants tenants, QuotaMeter quotas,
                         OpenConnections open) {
        this.tenants = tenants;
        this.quotas = quotas;
        this.open = open;
        this.metrics = metrics;
        this.drain = drain;
        this.kernels = kernels;
        this.publisher = publisher;
        this.config = config;
        this.registry = registry;
        this.store = store;
        this.rules = new FrameRules(config.maxFrameBytes(), config.maxOpsPerSession(), config.maxOperandElements(),
                config.maxDynamicRows());
        FrameRules.checkSetting("max-ranked-per-report", config.maxRankedPerReport(), 1, SessionLimit.SESSION_LIMIT_REPORT_TOP_N_VALUE);
        FrameRules.checkSetting("max-plan-requests", config.maxPlanRequests(), 0, PlanLimit.PLAN_LIMIT_REQUESTS_PER_CONNECTION_VALUE);
    }

    void route(@Observes Router router) {
        router.route(PATH).handler(this::upgrade);
    }

    /** The WebSocket handshake; a request that is not one is answered 400. */
    private void upgrade(RoutingContext request) {
        request.request().toWebSocket().onComplete(upgraded -> {
            if (upgraded.failed()) {
                if (!request.response().ended()) {
                    request.response().setStatusCode(400).end("a WebSocket upgrade is expected here");
                }
                return;
            }
            ServerWebSocket socket = upgraded.result();
            ClientConnection connection = new ClientConnection(ID_PREFIX + CONNECTIONS.incrementAndGet(), socket);
            Context context = Vertx.currentContext();
            open.opened(connection);
            socket.binaryMessageHandler(message -> onMessage(message, connection, context));
            socket.textMessageHandler(text -> onText(connection));
            socket.pongHandler(pong -> registry.heard(connection.id(), false, System.currentTimeMillis()));
            socket.exceptionHandler(failure -> LOG.debugf("connection %s: %s", connection.id(), failure));
            socket.closeHandler(closed -> {
                open.closed(connection.id());
                registry.close(connection.id());
            });
            serially(connection, context, () -> onOpen(connection));
        });
    }

    /**
     * Runs {@code answer} on a context of its own and reads the connection's next frame once it is
     * answered; a failure nothing else handled is logged and closes the connection (1011).
     */
    private void serially(ClientConnection connection, Context context, Supplier<Uni<Void>> answer) {
        ServerWebSocket socket = connection.socket();
        socket.pause();
        VertxContext.createNewDuplicatedContext(context).runOnContext(ignored -> run(connection, answer)
                .onTermination().invoke(() -> context.runOnContext(v -> socket.resume()))
                .subscribe().with(done -> { }, failure -> { }));
    }

    /**
     * The handler's answer, with a failure no handler took turned into the connection's close
     * (1011); {@link #ANSWERED_LATER} as it is (its answer cannot fail, and no operator is made for it).
     */
    private static Uni<Void> run(ClientConnection connection, Supplier<Uni<Void>> handler) {
        Uni<Void> answer;
        try {
            answer = handler.get();
        } catch (RuntimeException unexpected) {
            answer = Uni.createFrom().failure(unexpected);
        }
        if (answer == ANSWERED_LATER) {
            return answer;
        }
        return answer.onFailure().recoverWithUni(failure -> {
            LOG.errorf(failure, "connection %s: frame not handled, closing it", connection.id());
            return connection.close(ProtocolException.INTERNAL_ERROR, "internal error").onFailure().recoverWithNull();
        });
    }

    /**
     * Admits the connection within the gateway's and the address's caps, for the tenant its API key
     * names (from an Origin the tenant allows), or refuses it with the reason. Its frames wait for this.
     */
    private Uni<Void> onOpen(ClientConnection connection) {
        if (drain.draining()) {
            return refused(ProtocolException.shuttingDown(), connection);
        }
        ProtocolException refused = registry.admit(connection.id(), origin(connection), config.maxConnections(),
                config.maxConnectionsPerAddress(), System.currentTimeMillis());
        if (refused != null) {
            return refused(refused, connection);
        }
        return tenants.authenticate(queryParameter(connection.query(), "key"), connection.header("Origin"))
                .invoke(tenant -> registry.authenticated(connection.id(), tenant))
                .replaceWithVoid()
                .onFailure(ProtocolException.class).recoverWithUni(f -> refused((ProtocolException) f, connection));
    }

    /** The first value of a URL query's parameter, decoded; null when it has none. */
    static String queryParameter(String query, String name) {
        if (query == null) {
            return null;
        }
        List<String> values = new QueryStringDecoder(query, false).parameters().get(name);
        return values == null || values.isEmpty() ? null : values.get(0);
    }

    /**
     * One client frame, on the connection's event loop. Credit, Report and Microbench are handled
     * right here (a report's answer goes out when the broker has it); a frame whose answer waits on
     * another service is handled {@link #serially}.
     */
    private void onMessage(Buffer message, ClientConnection connection, Context context) {
        registry.heard(connection.id(), true, System.currentTimeMillis());
        ClientFrame frame;
        try {
            frame = rules.parse(message.getBytes());
        } catch (ProtocolException e) {
            refused(e, connection).subscribe().with(v -> { }, f -> { });
            return;
        }
        metrics.frame(frame.getFrameCase());
        switch (frame.getFrameCase()) {
            case CREDIT, REPORT, MICROBENCH -> {
                Uni<Void> answer = run(connection, () -> onFrame(frame, connection));
                if (answer != ANSWERED_LATER) { // a report's answer is a callback of its own: nothing to subscribe to
                    answer.subscribe().with(v -> { }, f -> { });
                }
            }
            default -> serially(connection, context, () -> onFrame(frame, connection));
        }
    }

    private Uni<Void> onFrame(ClientFrame frame, ClientConnection connection) {
        try {
            Session session = registry.session(connection.id());
            return switch (frame.getFrameCase()) {
                case HELLO -> answering(connection, () -> onHello(frame.getHello(), session, connection));
                case CREDIT -> {
                    requireSession(session, "Credit");
                    registry.update(session, s -> s.grant(frame.getCredit().getCredits()));
                    yield flush(session, connection);
                }
                case REPORT -> onReport(frame.getReport(), requireSession(session, "Report"), connection);
                case MICROBENCH -> onMicrobench(frame.getMicrobench(), requireSession(session, "Microbench"), connection);
                case PLAN_REQUEST -> onPlanRequest(frame.getPlanRequest(), connection);
                case RESUME -> answering(connection, () -> onResume(frame.getResume(), session, connection));
                case FRAME_NOT_SET -> throw ProtocolException.malformed("frame carries no known message");
            };
        } catch (ProtocolException e) {
            return refused(e, connection);
        }
    }

    /** A frame the client waits on the answer to: its connection is not idle until the answer (or refusal) is sent. */
    private Uni<Void> answering(ClientConnection connection, Supplier<Uni<Void>> answer) {
        registry.answering(connection.id());
        Uni<Void> answered;
        try {
            answered = answer.get();
        } catch (RuntimeException refused) {
            registry.answered(connection.id(), System.currentTimeMillis());
            throw refused;
        }
        return answered.onTermination().invoke(() -> registry.answered(connection.id(), System.currentTimeMillis()));
    }

    private void onText(ClientConnection connection) {
        registry.heard(connection.id(), true, System.currentTimeMillis());
        refused(ProtocolException.malformed("text messages are not spoken here: send binary ClientFrame protobuf"), connection)
                .subscribe().with(v -> { }, f -> { });
    }

    private Uni<Void> onHello(Hello hello, Session existing, ClientConnection connection) {
        if (existing != null) {
            throw ProtocolException.protocol("Hello was sent twice");
        }
        rules.checkHello(hello);
        Tenant tenant = registry.tenant(connection.id());
        takeSession(tenant, connection);
        Session session = registry.open(connection.id(), hello);
        registry.update(session, s -> s.from(registry.origin(connection.id()), tenant.name()));
        LOG.infof("session %s: device %s, %d ops", session.id(), hello.getDevice().getFingerprint(), hello.getOpsCount());
        long helloAt = System.nanoTime();
        SessionTrace trace = kernels.trace("jitzoo.session.hello", session.id(), hello);
        return kernels.start(hello, tenant.name(), trace)
                .call(start -> {
                    registry.update(session, s -> {
                        start.initial().forEach(k -> s.issue(k.getArtifact().getRef()));
                        s.holdTo(start.kindPeakGflops());
                    });
                    return keep(session, connection).chain(token -> send(connection, ServerFrame.newBuilder().setWelcome(Welcome.newBuilder()
                            .setSessionId(session.id()).addAllInitial(start.initial()).setResumeToken(token)).build()))
                            .invoke(() -> metrics.welcomed(Duration.ofNanos(System.nanoTime() - helloAt)));
                })
                .invoke(start -> generate(session, kernels.candidates(hello, start.offers(), trace), connection))
                .onTermination().invoke((start, failure, cancelled) -> trace.end(failure))
                .replaceWithVoid()
                .onFailure(f -> !(f instanceof ProtocolException))
                .transform(f -> ProtocolException.unavailable("kernel services unavailable: " + f.getMessage()))
                .onFailure(ProtocolException.class).recoverWithUni(f -> refused((ProtocolException) f, connection));
    }

    /**
     * Keeps a new session in the store under a fresh token, and completes with the token; with
     * an empty one when the store cannot keep it (the session goes on, but cannot be resumed).
     */
    private Uni<String> keep(Session session, ClientConnection connection) {
        byte[] secret = new byte[32];
        RANDOM.nextBytes(secret);
        String token = Base64.getUrlEncoder().withoutPadding().encodeToString(secret);
        List<KernelRef> initial = registry.read(session, Session::issued);
        double kindPeak = registry.read(session, Session::kindPeakGflops);
        String tenant = registry.tenant(connection.id()).name();
        String page = pageOrigin(connection);
        return stored(() -> store.create(token, session.id(), session.hello(), initial, kindPeak, tenant, page)
                        .invoke(() -> registry.update(session, s -> s.keptAs(token))).replaceWith(token),
                "", "session " + session.id() + " not kept, it cannot be resumed");
    }

    /**
     * A call to the session store that cannot hold a session up: one that fails (a synchronous
     * throw included, as when Redis cannot be connected) or takes over {@link SessionStore#TIMEOUT}
     * gives {@code fallback}, with a warning.
     */
    private static <T> Uni<T> stored(Supplier<Uni<? extends T>> call, T fallback, String otherwise) {
        return Uni.createFrom().<T>deferred(call).ifNoItem().after(SessionStore.TIMEOUT).fail()
                .onFailure().recoverWithItem(f -> {
                    LOG.warnf("%s: %s", otherwise, f.toString());
                    return fallback;
                });
    }

    /**
     * A new connection going on with a kept session: the session as it was (id, Hello, kernels
     * issued, reports stored), with the client's credit now; then the offers it was not sent.
     */
    private Uni<Void> onResume(Resume resume, Session existing, ClientConnection connection) {
        if (existing != null) {
            throw ProtocolException.protocol("Resume after the connection's session started");
        }
        rules.checkResume(resume);
        return stored(() -> store.find(resume.getToken()), null, "session store unavailable, resume refused")
                .chain(kept -> {
                    if (kept == null) {
                        throw ProtocolException.resumeRejected("sessions cannot be resumed now: start a new one with Hello");
                    }
                    if (kept.isEmpty()) {
                        throw ProtocolException.resumeRejected("unknown or expired resume token: start a new session with Hello");
                    }
                    Tenant tenant = registry.tenant(connection.id());
                    if (!kept.get().tenant().equals(tenant.name()) || !kept.get().pageOrigin().equals(pageOrigin(connection))) {
                        throw ProtocolException.resumeRejected("the resume token was issued to another tenant or page: start a new session with Hello");
                    }
                    takeSession(tenant, connection);
                    // one live connection a session: the one it was on (dropped, or a copy of the token in use) is closed
                    String before = registry.holder(kept.get().sessionId());
                    if (before != null) {
                        registry.close(before);
                        open.find(before).ifPresent(old -> old.close(1008, "the session was resumed on another connection")
                                .subscribe().with(v -> { }, e -> { }));
                    }
                    Session resumed = Session.resumed(kept.get(), resume.getToken(), resume.getCredits());
                    resumed.from(registry.origin(connection.id()), registry.tenant(connection.id()).name());
                    Session session = registry.adopt(connection.id(), resumed);
                    List<KernelRef> sent = kept.get().issued().stream().filter(k -> kept.get().sent().contains(k.getKernelId())).toList();
                    LOG.infof("session %s resumed: %d kernels sent before, %d ops reported", session.id(), sent.size(),
                            kept.get().reportedOps().size());
                    SessionTrace trace = kernels.trace("jitzoo.session.resume", session.id(), session.hello());
                    return send(connection, ServerFrame.newBuilder().setResumed(Resumed.newBuilder().setSessionId(session.id())).build())
                            .invoke(() -> generate(session, kernels.remaining(session.hello(), registry.tenant(connection.id()).name(),
                                    sent, trace), connection))
                            .onTermination().invoke((ignored, failure, cancelled) -> trace.end(failure));
                })
                .onFailure(ProtocolException.class).recoverWithUni(f -> refused((ProtocolException) f, connection));
    }

    /**
     * Queues the offers as they are generated (kept in the store first: those ready together in
     * one write) and sends them within the client's credit. The offers wait while
     * {@code max-queued-offers} wait for credit (codegen's batch is taken meanwhile:
     * {@link KernelSources#candidates}). When it fails, or codegen sends nothing for the RPC
     * timeout while kernels are wanted, the offers end there: OffersDone says why, and the session
     * goes on with the kernels it has.
     */
    private void generate(Session session, Multi<List<KernelSources.Offer>> offers, ClientConnection connection) {
        String token = registry.read(session, Session::token);
        Tenant tenant = registry.tenant(connection.id());
        int chunk = Math.max(1, config.maxQueuedOffers());
        AtomicReference<Cancellable> running = new AtomicReference<>();
        StallGuard guard = new StallGuard(config.rpcTimeout(), () -> {
            running.get().cancel();
            endOffers(session, connection, "codegen sent no kernel for " + config.rpcTimeout().toSeconds() + " s");
        });
        running.set(guard.watch(offers)
                .onItem().transformToMultiAndConcatenate(ready -> Multi.createFrom().iterable(chunks(ready, chunk)))
                .onItem().transformToUniAndConcatenate(ready -> {
                    List<KernelSources.Offer> allowed = ready.subList(0, offerQuota(tenant, ready.size()));
                    Uni<Void> queued = keepIssued(token, allowed.stream().map(o -> o.artifact().getRef()).toList()).chain(() -> {
                        registry.update(session, s -> allowed.forEach(offer -> s.enqueue(KernelOffer.newBuilder()
                                .setArtifact(offer.artifact()).setRank(offer.rank()).setFromZoo(offer.fromZoo()).build(), offer.generatedNs())));
                        return flush(session, connection);
                    });
                    if (allowed.size() < ready.size()) {
                        metrics.refused(dev.jitzoo.proto.gateway.v1.ErrorCode.ERROR_CODE_QUOTA_EXCEEDED);
                        return queued.chain(() -> Uni.createFrom().failure(
                                ProtocolException.offerQuota(tenant.name(), tenant.quotas().offersPerMinute())));
                    }
                    return queued.chain(() -> guard.holding(registry.read(session, s -> s.roomFor(config.maxQueuedOffers()))));
                })
                .subscribe().with(
                        ignored -> { },
                        failure -> endOffers(session, connection, failure instanceof ProtocolException quota ? quota.getMessage()
                                : "kernel generation failed: " + failure.getMessage()),
                        () -> {
                            registry.update(session, Session::markGenerationDone);
                            flush(session, connection).subscribe().with(v -> { }, e -> { });
                        }));
        registry.generating(connection.id(), running.get());
    }

    /** The list in pieces of at most {@code size}, in order. */
    private static <T> List<List<T>> chunks(List<T> all, int size) {
        List<List<T>> chunks = new ArrayList<>();
        for (int from = 0; from < all.size(); from += size) {
            chunks.add(all.subList(from, Math.min(all.size(), from + size)));
        }
        return chunks;
    }

    /** Takes up to {@code wanted} offers from the tenant's quota, one by one; says how many it could. */
    private int offerQuota(Tenant tenant, int wanted) {
        int taken = 0;
        while (taken < wanted && quotas.take(tenant, QuotaMeter.Kind.OFFERS, 1, System.currentTimeMillis())) {
            taken++;
        }
        return taken;
    }

    /** Ends a session's offers early, saying why in its OffersDone; the session goes on. */
    private void endOffers(Session session, ClientConnection connection, String reason) {
        LOG.warnf("session %s: offers cut short: %s", session.id(), reason);
        metrics.cutShort();
        registry.update(session, s -> s.cutShort(reason));
        flush(session, connection).subscribe().with(v -> { }, e -> { });
    }

    private Uni<Void> keepIssued(String token, List<KernelRef> kernels) {
        if (token == null || kernels.isEmpty()) {
            return Uni.createFrom().voidItem();
        }
        return stored(() -> store.issued(token, kernels), null, kernels.size() + " kernels not kept with their session");
    }

    /**
     * Sends what the client's credit allows, then OffersDone once everything went out. The store
     * learns what was written on the side, once it was: should that fail, a resumed session is
     * only offered a kernel twice.
     */
    private Uni<Void> flush(Session session, ClientConnection connection) {
        record Due(List<Session.Queued> sendable, boolean done, int sent, String cutShort, String token,
                   CompletableFuture<Void> freedRoom) {
        }
        // the writes start under the session's lock: two flushes (a Credit, a kernel generated) cannot
        // interleave their offers, which go out in the order they were queued, best first
        List<CompletableFuture<Void>> writes = new ArrayList<>();
        Due due = registry.read(session, s -> {
            List<Session.Queued> sendable = s.takeSendable();
            Due d = new Due(sendable, s.takeDone(), s.offersSent(), s.cutShortReason(), s.token(), s.takeFreedRoom());
            for (Session.Queued queued : d.sendable()) {
                writes.add(send(connection, ServerFrame.newBuilder().setOffer(queued.offer()).build())
                        .invoke(() -> metrics.offerWritten(Duration.ofNanos(System.nanoTime() - queued.sinceNs())))
                        .subscribeAsCompletionStage());
            }
            if (d.done()) {
                OffersDone done = OffersDone.newBuilder().setOffersSent(d.sent()).setCutShort(d.cutShort()).build();
                writes.add(send(connection, ServerFrame.newBuilder().setOffersDone(done).build()).subscribeAsCompletionStage());
            }
            return d;
        });
        if (due.freedRoom() != null) {
            due.freedRoom().complete(null); // generation goes on after these offers' writes started: its next offer follows them
        }
        CompletableFuture<Void> written = CompletableFuture.allOf(writes.toArray(CompletableFuture[]::new));
        if (due.token() != null && !due.sendable().isEmpty()) {
            // marked once written: an offer lost with its connection (a gateway killed) is offered again on resume
            List<String> sent = due.sendable().stream().map(o -> o.offer().getArtifact().getRef().getKernelId()).toList();
            written.thenRun(() -> stored(() -> store.sent(due.token(), sent), null, "sent offers not marked").subscribe().with(v -> { }));
        }
        metrics.offersSent(due.sendable().size());
        return Uni.createFrom().completionStage(written);
    }

    /** Needs no session: a plan is a pure function of the device and the op. A request the space refuses is answered with its reason. */
    private Uni<Void> onPlanRequest(PlanRequest request, ClientConnection connection) {
        int count = registry.countPlanRequest(connection.id());
        if (count > config.maxPlanRequests()) {
            throw ProtocolException.protocol("more than " + config.maxPlanRequests() + " PlanRequests on one connection");
        }
        rules.checkPlanRequest(request);
        if (!quotas.takeForAddress(registry.origin(connection.id()), QuotaMeter.Kind.PLAN_REQUESTS, config.addressPlanRequestsPerMinute(), 1,
                System.currentTimeMillis())) {
            throw ProtocolException.addressQuota(QuotaMeter.Kind.PLAN_REQUESTS, config.addressPlanRequestsPerMinute());
        }
        Tenant tenant = registry.tenant(connection.id());
        if (!quotas.take(tenant, QuotaMeter.Kind.PLAN_REQUESTS, 1, System.currentTimeMillis())) {
            throw ProtocolException.planQuota(tenant.name(), tenant.quotas().planRequestsPerMinute());
        }
        return kernels.dynamicPlan(request)
                .chain(plan -> send(connection, ServerFrame.newBuilder().setDynamicPlan(plan).build()))
                .onFailure().recoverWithUni(f -> refused(planFailure(f), connection));
    }

    private static ProtocolException planFailure(Throwable f) {
        if (f instanceof StatusRuntimeException e && e.getStatus().getCode() == Status.Code.INVALID_ARGUMENT) {
            return ProtocolException.invalidPlanRequest(e.getStatus().getDescription());
        }
        LOG.warnf("plan request not answered: %s", f.toString());
        return ProtocolException.unanswered("the space service did not answer the plan request: " + f.getMessage());
    }

    /**
     * Publishes a report and marks its op stored in the session; a resumed session's report of an
     * op stored before (its acknowledgement was lost with the connection) is acknowledged again.
     */
    private Uni<Void> onReport(Report report, Session session, ClientConnection connection) {
        ServerFrame ack = ServerFrame.newBuilder().setReportAck(ReportAck.newBuilder().setOp(report.getOp())).build();
        record Accepted(KernelReport report, String token, int op) {
        }
        Accepted accepted = registry.read(session, s -> s.storedAlready(report) ? null
                : new Accepted(s.acceptReport(report, config.maxRankedPerReport(), System.currentTimeMillis()), s.token(), s.opIndex(report)));
        if (accepted == null) {
            return send(connection, ack);
        }
        Tenant tenant = registry.tenant(connection.id());
        if (!quotas.takeForAddress(registry.origin(connection.id()), QuotaMeter.Kind.REPORTS, config.addressReportsPerMinute(), 1,
                System.currentTimeMillis())) {
            registry.update(session, s -> s.withdrawReport(report));
            throw ProtocolException.addressQuota(QuotaMeter.Kind.REPORTS, config.addressReportsPerMinute());
        }
        if (!quotas.take(tenant, QuotaMeter.Kind.REPORTS, 1, System.currentTimeMillis())) {
            registry.update(session, s -> s.withdrawReport(report));
            throw ProtocolException.reportQuota(tenant.name(), tenant.quotas().reportsPerMinute());
        }
        CompletionStage<Void> published = publisher.publish(accepted.report(), session.hello().getDevice())
                .thenRun(() -> kernels.reported(session.hello(), tenant.name()));
        if (accepted.token() != null) {
            String unmarked = "session " + session.id() + ": report not marked stored (one sent again is stored once by the zoo)";
            published = published.thenCompose(stored -> store.reported(accepted.token(), accepted.op())
                    .exceptionally(failure -> {
                        LOG.warnf("%s: %s", unmarked, failure.toString());
                        return null;
                    }));
        }
        return publishThenAck(published, ack, "report", s -> s.withdrawReport(report), session, connection);
    }

    private Uni<Void> onMicrobench(Microbench microbench, Session session, ClientConnection connection) {
        MicrobenchReport accepted = registry.read(session, s -> s.acceptMicrobench(microbench, System.currentTimeMillis()));
        return publishThenAck(publisher.publish(accepted),
                ServerFrame.newBuilder().setMicrobenchAck(MicrobenchAck.getDefaultInstance()).build(),
                "microbenchmark", Session::withdrawMicrobench, session, connection);
    }

    /**
     * Acknowledges once the broker has the record; if it cannot, says so and lets the client send it
     * again. The connection's next frame is read meanwhile: a session's reports (one per op, so a
     * handful) are in flight together, not each waiting for the broker's answer to the one before.
     * Plain callbacks, not a reactive chain: this runs for every report.
     */
    private Uni<Void> publishThenAck(CompletionStage<Void> published, ServerFrame ack, String what, Consumer<Session> withdraw,
                                     Session session, ClientConnection connection) {
        long start = System.nanoTime();
        published.whenComplete((ok, failure) -> {
            ServerFrame answer = ack;
            if (failure == null) {
                metrics.published(Duration.ofNanos(System.nanoTime() - start));
            } else {
                LOG.warnf("session %s: %s not published: %s", session.id(), what, failure.toString());
                registry.update(session, withdraw);
                ProtocolException unstored = ProtocolException.unavailable(what + " not stored, try again later");
                metrics.refused(unstored.code());
                answer = error(unstored);
            }
            connection.write(answer.toByteArray())
                    .onFailure(f -> LOG.debugf("session %s: %s answer not sent: %s", session.id(), what, f));
        });
        return ANSWERED_LATER;
    }

    /** Takes a session from the address's and the tenant's quotas; refuses the Hello or Resume when either is used up. */
    private void takeSession(Tenant tenant, ClientConnection connection) {
        long now = System.currentTimeMillis();
        if (!quotas.takeForAddress(registry.origin(connection.id()), QuotaMeter.Kind.SESSIONS, config.addressSessionsPerMinute(), 1, now)) {
            throw ProtocolException.addressQuota(QuotaMeter.Kind.SESSIONS, config.addressSessionsPerMinute());
        }
        if (!quotas.take(tenant, QuotaMeter.Kind.SESSIONS, 1, now)) {
            throw ProtocolException.sessionQuota(tenant.name(), tenant.quotas().sessionsPerMinute());
        }
    }

    /** The page's Origin header (empty when none was sent): a resume token works only for the page it was issued to. */
    private static String pageOrigin(ClientConnection connection) {
        String origin = connection.header("Origin");
        return origin == null ? "" : origin;
    }

    /**
     * The client's network origin as reports carry it: the first 16 hex digits of SHA-256 over the
     * salt and its network ({@link ClientAddress}: the peer, or behind trusted proxies the
     * X-Forwarded-For entry they appended; an IPv6 address by its /64); the address itself is
     * never stored or sent on.
     */
    private String origin(ClientConnection connection) {
        String network = ClientAddress.of(connection.peer(),
                connection.header("X-Forwarded-For"), config.trustForwardedFor(), config.trustedProxyHops());
        return Digests.sha256Hex(config.originSalt() + "|" + network, 8);
    }

    private static Session requireSession(Session session, String frame) {
        if (session == null) {
            throw ProtocolException.protocol(frame + " before Hello");
        }
        return session;
    }

    /** Counts a refusal by its code, logs it (at a bounded rate), then answers it ({@link #refuse}). */
    private Uni<Void> refused(ProtocolException e, ClientConnection connection) {
        metrics.refused(e.code());
        refusals.info(connection.id(), e, System.currentTimeMillis());
        return refuse(e, connection);
    }

    /** Answers a refused frame or connection with an Error frame, and closes the connection when the refusal is fatal. */
    static Uni<Void> refuse(ProtocolException e, ClientConnection connection) {
        Uni<Void> sent = send(connection, error(e)).onFailure().recoverWithNull();
        if (!e.fatal()) {
            return sent;
        }
        return sent.chain(() -> connection.close(e.closeCode(), closeReason(e.getMessage())));
    }

    private static ServerFrame error(ProtocolException e) {
        return ServerFrame.newBuilder().setError(Error.newBuilder().setCode(e.code()).setMessage(e.getMessage())).build();
    }

    private static Uni<Void> send(ClientConnection connection, ServerFrame frame) {
        return connection.send(frame.toByteArray());
    }

    /** A close reason must fit in 123 bytes of UTF-8. */
    private static String closeReason(String message) {
        String reason = message;
        while (reason.getBytes(UTF_8).length > 123) {
            reason = reason.substring(0, reason.length() - 2);
        }
        return reason;
    }
}
