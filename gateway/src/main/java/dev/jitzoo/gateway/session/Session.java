package dev.jitzoo.gateway.session;

import dev.jitzoo.proto.gateway.v1.Hello;
import dev.jitzoo.proto.gateway.v1.Microbench;
import dev.jitzoo.proto.gateway.v1.KernelOffer;
import dev.jitzoo.proto.gateway.v1.RankedKernel;
import dev.jitzoo.proto.gateway.v1.Report;
import dev.jitzoo.proto.kernel.v1.KernelRef;
import dev.jitzoo.proto.rules.LatencyRules;
import dev.jitzoo.proto.rules.MicrobenchRules;
import dev.jitzoo.proto.zoo.v1.KernelReport;
import dev.jitzoo.proto.zoo.v1.MicrobenchReport;
import dev.jitzoo.proto.zoo.v1.Measurement;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * One browser session: what it asked for, which kernels it was given (the only ids its reports
 * may name), and the offers waiting for credit. Plain Java; callers synchronize on it.
 */
public final class Session {

    private final String id;
    private final Hello hello;
    private final Map<String, KernelRef> issuedKernels = new HashMap<>();
    private final Set<Integer> reportedOps = new HashSet<>();
    /** Ops whose reports were stored before this connection (a resumed session): acknowledged again, not stored twice. */
    private final Set<Integer> storedOps = new HashSet<>();
    /** The session's resume token; null when the session store could not keep it. */
    private String token;
    /** The hashed network origin of the connection, for the zoo's election. */
    private String origin = "";
    /** The tenant whose key the connection gave, for the zoo. */
    private String tenant = "";
    private final Queue<Queued> pendingOffers = new ArrayDeque<>();
    private long credits;
    private int offersSent;
    private boolean generationDone;
    /** Why generation ended before the candidates did; empty when it ran to the end. */
    private String cutShort = "";
    private boolean doneSent;
    /** Completed once the offer queue is below its cap again; null when nobody waits for room. */
    private CompletableFuture<Void> room;
    /** Room freed by the last {@link #takeSendable}, not yet handed to generation. */
    private CompletableFuture<Void> freedRoom;
    private int roomBelow;
    private boolean microbenchSent;
    /** The device kind's single-thread Wasm peak as the zoo measured it at the Hello (NaN: not measured): its reports' ceiling. */
    private double kindPeakGflops = Double.NaN;

    public Session(String id, Hello hello) {
        this.id = id;
        this.hello = hello;
        this.credits = hello.getCredits();
    }

    /** A session taken up again on a new connection, as the session store kept it, with the client's credit now. */
    public static Session resumed(SessionStore.Kept kept, String token, long credits) {
        Session session = new Session(kept.sessionId(), kept.hello());
        kept.issued().forEach(session::issue);
        session.storedOps.addAll(kept.reportedOps());
        session.kindPeakGflops = kept.kindPeakGflops();
        session.credits = credits;
        session.token = token;
        return session;
    }

    public String id() {
        return id;
    }

    /** The resume token, or null when the session is not kept. */
    public String token() {
        return token;
    }

    public void keptAs(String resumeToken) {
        this.token = resumeToken;
    }

    /** The hashed network address the session's connection comes from, and its tenant (the latest, after a resume). */
    public void from(String networkOrigin, String tenantName) {
        this.origin = networkOrigin;
        this.tenant = tenantName;
    }

    /** Holds the session's reports to the ceiling its device kind's measured peak implies (NaN or 0: not measured). */
    public void holdTo(double kindPeakGflops) {
        this.kindPeakGflops = kindPeakGflops > 0 ? kindPeakGflops : Double.NaN;
    }

    public double kindPeakGflops() {
        return kindPeakGflops;
    }

    /** Every kernel issued so far (initial and offered). */
    public List<KernelRef> issued() {
        return List.copyOf(issuedKernels.values());
    }

    /** The op's index in the Hello, or -1. */
    public int opIndex(Report report) {
        return hello.getOpsList().indexOf(report.getOp());
    }

    /** Whether the op's report was stored before this connection: the client resends what it was not told was stored. */
    public boolean storedAlready(Report report) {
        return storedOps.contains(opIndex(report));
    }

    public Hello hello() {
        return hello;
    }

    /** Remembers a kernel the gateway gave this session, initial or offered. */
    public void issue(KernelRef kernel) {
        issuedKernels.put(kernel.getKernelId(), kernel);
    }

    public void enqueue(KernelOffer offer) {
        enqueue(offer, System.nanoTime());
    }

    /** Queues an offer generated at {@code generatedNs} (System.nanoTime). */
    public void enqueue(KernelOffer offer, long generatedNs) {
        issue(offer.getArtifact().getRef());
        pendingOffers.add(new Queued(offer, generatedNs));
    }

    public int pendingOfferCount() {
        return pendingOffers.size();
    }

    public void grant(long more) {
        credits += more;
    }

    /** An offer waiting to be sent, and since when (System.nanoTime): its generation, less the time on the wire. */
    public record Queued(KernelOffer offer, long sinceNs) {
    }

    /**
     * Offers that may go out now, within the client's credit. Generation waiting for room in the
     * queue may go on once they are written: {@link #takeFreedRoom} hands its future over, to be
     * completed by the caller after the writes started (completed here, under the session's lock,
     * an offer it generates at once would be written before these).
     */
    public List<Queued> takeSendable() {
        List<Queued> out = new java.util.ArrayList<>();
        while (credits > 0 && !pendingOffers.isEmpty()) {
            out.add(pendingOffers.poll());
            credits--;
            offersSent++;
        }
        if (room != null && pendingOffers.size() < roomBelow) {
            freedRoom = room;
            room = null;
        }
        return out;
    }

    /** The room {@link #takeSendable} freed, to complete once its offers' writes started; null when none. */
    public CompletableFuture<Void> takeFreedRoom() {
        CompletableFuture<Void> freed = freedRoom;
        freedRoom = null;
        return freed;
    }

    /**
     * Completes once fewer than {@code max} offers wait for credit: at once when they already do,
     * else when the client grants credit and some go out. The session's offers wait on it, so a
     * client that grants no credit has at most {@code max} offers queued.
     */
    public CompletionStage<Void> roomFor(int max) {
        if (pendingOffers.size() < max) {
            return CompletableFuture.completedFuture(null);
        }
        roomBelow = max;
        room = room == null ? new CompletableFuture<>() : room;
        return room;
    }

    public void markGenerationDone() {
        generationDone = true;
    }

    /** Generation ended early, for this reason: OffersDone says so once the offers made went out. */
    public void cutShort(String reason) {
        cutShort = reason;
        generationDone = true;
    }

    public String cutShortReason() {
        return cutShort;
    }

    /** True once, when every generated offer has been sent: time for OffersDone. */
    public boolean takeDone() {
        if (generationDone && pendingOffers.isEmpty() && !doneSent) {
            doneSent = true;
            return true;
        }
        return false;
    }

    public int offersSent() {
        return offersSent;
    }

    /**
     * Turns a client's report into the zoo's record of it, with the full kernel references the
     * gateway issued and the ceiling it was checked against. Refuses ops never asked for, ids never
     * issued for that op, bad timings, a latency faster than the device can reach
     * ({@link LatencyRules}: the zoo would refuse it after the acknowledgement), and a second
     * report of the same op. The record leaves the device to the session's
     * ({@code ReportPublisher} writes it once for the reports it carries).
     */
    public KernelReport acceptReport(Report report, int maxRanked, long nowMs) {
        int opIndex = opIndex(report);
        if (opIndex < 0) {
            throw ProtocolException.invalidReport("op " + report.getOp().getKind() + report.getOp().getShapeList()
                    + " was never offered in this session");
        }
        if (report.getRankedCount() == 0 || report.getRankedCount() > maxRanked) {
            throw ProtocolException.invalidReport("a report ranks 1 to " + maxRanked + " kernels, got "
                    + report.getRankedCount());
        }
        if (reportedOps.contains(opIndex)) {
            throw ProtocolException.invalidReport("this op was reported already in this session");
        }
        double ceiling = LatencyRules.ceilingFlops(hello.getBackend(), kindPeakGflops);
        KernelReport.Builder out = KernelReport.newBuilder()
                .setSessionId(id)
                .setOp(report.getOp())
                .setBackend(hello.getBackend())
                .setOrigin(origin).setTenant(tenant)
                .setReceivedAtMs(nowMs)
                .setCeilingGflops(ceiling / 1e9);
        Set<String> seen = new HashSet<>();
        for (RankedKernel ranked : report.getRankedList()) {
            if (!seen.add(ranked.getKernelId())) {
                throw ProtocolException.invalidReport("kernel " + ranked.getKernelId() + " is ranked twice");
            }
            Measurement timed = measurement(report, ranked, "kernel");
            String impossible = LatencyRules.problem(report.getOp(), timed.getMedianMs(), ceiling);
            if (impossible != null) {
                throw ProtocolException.invalidReport("kernel " + abbreviate(ranked.getKernelId()) + " " + impossible);
            }
            out.addRanked(timed);
        }
        if (report.hasInitial()) {
            out.setInitial(measurement(report, report.getInitial(), "initial kernel")).setInitialFromZoo(report.getInitialFromZoo());
        }
        reportedOps.add(opIndex);
        return out.build();
    }

    /** A timing of a kernel this session was issued for the report's op, with its full reference; refused otherwise. */
    private Measurement measurement(Report report, RankedKernel timed, String what) {
        KernelRef kernel = issuedKernels.get(timed.getKernelId());
        if (kernel == null || !kernel.getOp().equals(report.getOp())) {
            throw ProtocolException.invalidReport(what + " " + abbreviate(timed.getKernelId()) + " was not issued for this op in this session");
        }
        if (!(timed.getMedianMs() > 0) || Double.isInfinite(timed.getMedianMs())) {
            throw ProtocolException.invalidReport(what + " " + timed.getKernelId() + " has no positive latency");
        }
        return Measurement.newBuilder().setKernel(kernel).setMedianMs(timed.getMedianMs()).setSamples(timed.getSamples()).build();
    }

    /**
     * Turns a client's microbenchmark into the zoo's record of it, for this session's device.
     * Refuses what {@link MicrobenchRules} refuses, and a second result in one session.
     */
    public MicrobenchReport acceptMicrobench(Microbench microbench, long nowMs) {
        if (microbenchSent) {
            throw ProtocolException.invalidMicrobench("a session sends one microbenchmark result");
        }
        String problem = MicrobenchRules.problem(microbench.getSpeedupsList(), microbench.getEngine(),
                microbench.getPeakGflops());
        if (problem != null) {
            throw ProtocolException.invalidMicrobench(problem);
        }
        microbenchSent = true;
        return MicrobenchReport.newBuilder().setSessionId(id).setDevice(hello.getDevice())
                .addAllSpeedups(microbench.getSpeedupsList()).setEngine(microbench.getEngine())
                .setPeakGflops(microbench.getPeakGflops()).setOrigin(origin).setTenant(tenant).setReceivedAtMs(nowMs).build();
    }

    /** Lets the microbenchmark be sent again, when it could not be stored. */
    public void withdrawMicrobench() {
        microbenchSent = false;
    }

    /** Lets the op be reported again, when its report could not be stored. */
    public void withdrawReport(Report report) {
        reportedOps.remove(hello.getOpsList().indexOf(report.getOp()));
    }

    private static String abbreviate(String s) {
        return s.length() <= 64 ? s : s.substring(0, 64) + "…";
    }
}
