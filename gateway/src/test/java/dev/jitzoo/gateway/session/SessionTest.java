package dev.jitzoo.gateway.session;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jitzoo.proto.gateway.v1.ErrorCode;
import dev.jitzoo.proto.gateway.v1.Hello;
import dev.jitzoo.proto.gateway.v1.KernelOffer;
import dev.jitzoo.proto.gateway.v1.Microbench;
import dev.jitzoo.proto.gateway.v1.RankedKernel;
import dev.jitzoo.proto.gateway.v1.Report;
import dev.jitzoo.proto.kernel.v1.Backend;
import dev.jitzoo.proto.kernel.v1.DeviceProfile;
import dev.jitzoo.proto.kernel.v1.KernelArtifact;
import dev.jitzoo.proto.kernel.v1.KernelRef;
import dev.jitzoo.proto.kernel.v1.OpKind;
import dev.jitzoo.proto.kernel.v1.OpSpec;
import dev.jitzoo.proto.kernel.v1.Primitive;
import dev.jitzoo.proto.kernel.v1.PrimitiveSpeedup;
import dev.jitzoo.proto.rules.LatencyRules;
import dev.jitzoo.proto.zoo.v1.KernelReport;
import dev.jitzoo.proto.zoo.v1.MicrobenchReport;
import org.junit.jupiter.api.Test;

class SessionTest {

    private static final OpSpec OP = OpSpec.newBuilder().setKind(OpKind.OP_KIND_MATMUL)
            .addShape(8).addShape(8).addShape(8).build();
    private static final OpSpec OTHER_OP = OpSpec.newBuilder().setKind(OpKind.OP_KIND_MATMUL)
            .addShape(9).addShape(9).addShape(9).build();

    private final Session session = new Session("s1", Hello.newBuilder().setProtocolVersion(1)
            .setDevice(DeviceProfile.newBuilder().setFingerprint("fp")).setBackend(Backend.BACKEND_WASM)
            .addOps(OP).addOps(OTHER_OP).setCredits(2).build());

    @Test
    void sendsOnlyWhatTheCreditAllowsThenSaysDone() {
        for (int i = 0; i < 3; i++) {
            session.enqueue(offer("k" + i, OP));
        }
        assertEquals(2, session.takeSendable().size());
        assertTrue(session.takeSendable().isEmpty(), "credit spent");
        session.markGenerationDone();
        assertFalse(session.takeDone(), "one offer still waits");
        session.grant(5);
        assertEquals(1, session.takeSendable().size());
        assertTrue(session.takeDone());
        assertFalse(session.takeDone(), "done is said once");
        assertEquals(3, session.offersSent());
    }

    @Test
    void generationWaitsForRoomWhileTheClientGrantsNoCredit() {
        Session noCredit = new Session("s2", session.hello().toBuilder().setCredits(0).build());
        assertTrue(noCredit.roomFor(2).toCompletableFuture().isDone(), "an empty queue has room");
        noCredit.enqueue(offer("k1", OP));
        noCredit.enqueue(offer("k2", OP));
        var room = noCredit.roomFor(2).toCompletableFuture();
        assertFalse(room.isDone(), "two offers wait for credit: generation waits");
        assertTrue(noCredit.takeSendable().isEmpty());
        assertFalse(room.isDone(), "still no credit");
        noCredit.grant(1);
        assertEquals(1, noCredit.takeSendable().size());
        assertFalse(room.isDone(), "the room is the caller's to free, once the offer's write started");
        var freed = noCredit.takeFreedRoom();
        assertSame(room, freed, "one went out: room for the next");
        assertNull(noCredit.takeFreedRoom(), "handed over once");
    }

    @Test
    void offersCutShortSayWhyOnceTheQueueIsSent() {
        session.enqueue(offer("k1", OP));
        session.cutShort("codegen sent no kernel for 15 s");
        assertEquals(1, session.takeSendable().size());
        assertTrue(session.takeDone());
        assertEquals("codegen sent no kernel for 15 s", session.cutShortReason());
    }

    @Test
    void acceptsOneValidMicrobenchmarkPerSessionForItsDevice() {
        session.from("0123456789abcdef", "acme");
        MicrobenchReport accepted = session.acceptMicrobench(microbench(Primitive.PRIMITIVE_VECTORIZE, 1.9).toBuilder()
                .setPeakGflops(48.5).build(), 7);
        assertEquals("fp", accepted.getDevice().getFingerprint());
        assertEquals("s1", accepted.getSessionId());
        assertEquals(1.9, accepted.getSpeedups(0).getSpeedup());
        assertEquals(48.5, accepted.getPeakGflops(), "the measured peak goes to the zoo");
        assertEquals("0123456789abcdef", accepted.getOrigin(), "with the hashed network origin");
        assertEquals("acme", accepted.getTenant(), "and the tenant");
        assertMicrobenchRefused(microbench(Primitive.PRIMITIVE_UNROLL, 0.7), "one microbenchmark result");
        session.withdrawMicrobench(); // the broker did not take it: the client may send it again
        session.acceptMicrobench(microbench(Primitive.PRIMITIVE_UNROLL, 0.7), 8);
    }

    @Test
    void refusesNonsenseMicrobenchmarksWithTheReason() {
        assertMicrobenchRefused(Microbench.getDefaultInstance(), "at least one primitive");
        assertMicrobenchRefused(microbench(Primitive.PRIMITIVE_VECTORIZE, 0), "must be in (0, 1000), got 0.0");
        assertMicrobenchRefused(microbench(Primitive.PRIMITIVE_VECTORIZE, Double.NaN), "got NaN");
        assertMicrobenchRefused(microbench(Primitive.PRIMITIVE_VECTORIZE, 5000), "got 5000.0");
        assertMicrobenchRefused(Microbench.newBuilder().addSpeedups(PrimitiveSpeedup.newBuilder().setPrimitiveValue(42)
                .setSpeedup(1)).build(), "unknown primitive 42");
        assertMicrobenchRefused(microbench(Primitive.PRIMITIVE_PASSES, 1.1).toBuilder().addSpeedups(PrimitiveSpeedup
                .newBuilder().setPrimitive(Primitive.PRIMITIVE_PASSES).setSpeedup(1.2)).build(), "measured twice");
        assertMicrobenchRefused(microbench(Primitive.PRIMITIVE_PASSES, 1.1).toBuilder().setEngine("x".repeat(257)).build(),
                "longer than 256");
        assertMicrobenchRefused(microbench(Primitive.PRIMITIVE_PASSES, 1.1).toBuilder().setPeakGflops(-1).build(),
                "peak_gflops must be in [0, 1000) (0: not measured), got -1.0");
        assertMicrobenchRefused(microbench(Primitive.PRIMITIVE_PASSES, 1.1).toBuilder().setPeakGflops(Double.POSITIVE_INFINITY)
                .build(), "got Infinity");
        assertMicrobenchRefused(microbench(Primitive.PRIMITIVE_PASSES, 1.1).toBuilder().setPeakGflops(1e6).build(), "got 1000000.0");
        session.acceptMicrobench(microbench(Primitive.PRIMITIVE_PASSES, 1.1), 9); // none of those counted as sent
    }

    private void assertMicrobenchRefused(Microbench microbench, String reason) {
        ProtocolException e = assertThrows(ProtocolException.class, () -> session.acceptMicrobench(microbench, 1));
        assertEquals(ErrorCode.ERROR_CODE_INVALID_MICROBENCH, e.code());
        assertFalse(e.fatal(), "the session stays open");
        assertTrue(e.getMessage().contains(reason), e.getMessage());
    }

    private static Microbench microbench(Primitive primitive, double speedup) {
        return Microbench.newBuilder().setEngine("node 20")
                .addSpeedups(PrimitiveSpeedup.newBuilder().setPrimitive(primitive).setSpeedup(speedup)).build();
    }

    @Test
    void acceptsAReportOfIssuedKernelsWithTheirFullReferences() {
        session.enqueue(offer("k1", OP));
        session.issue(ref("k0", OP));
        session.from("0123456789abcdef", "acme");
        KernelReport report = session.acceptReport(report(OP, "k1", "k0"), 5, 42);
        assertEquals("0123456789abcdef", report.getOrigin(), "the hashed network origin goes with the report");
        assertEquals("acme", report.getTenant(), "and the tenant whose key the session gave");
        assertEquals("s1", report.getSessionId());
        assertFalse(report.hasDevice(), "the device is the session's: the publisher writes it once for the reports of a record");
        assertEquals(OP, report.getRanked(0).getKernel().getOp());
        assertEquals("k0", report.getRanked(1).getKernel().getKernelId());
        assertEquals(42, report.getReceivedAtMs());
        assertFalse(report.hasInitial(), "no initial kernel timed");
    }

    @Test
    void takesTheInitialKernelsTimingOnlyForAKernelIssuedForTheOp() {
        session.issue(ref("k0", OP));
        session.enqueue(offer("k1", OP));
        RankedKernel initial = RankedKernel.newBuilder().setKernelId("k0").setMedianMs(3.0).setSamples(5).build();
        assertRefused(report(OP, "k1").toBuilder().setInitial(initial.toBuilder().setKernelId("k9")).build(),
                "initial kernel k9 was not issued");
        assertRefused(report(OP, "k1").toBuilder().setInitial(initial.toBuilder().setMedianMs(-1)).build(), "positive latency");
        KernelReport report = session.acceptReport(report(OP, "k1").toBuilder().setInitial(initial).setInitialFromZoo(true).build(), 5, 0);
        assertEquals(OP, report.getInitial().getKernel().getOp(), "the full reference the gateway issued");
        assertEquals(3.0, report.getInitial().getMedianMs());
        assertTrue(report.getInitialFromZoo());
    }

    @Test
    void refusesForgedIdsForeignOpsRepeatsAndBadTimings() {
        session.enqueue(offer("k1", OP));
        session.enqueue(offer("k9", OTHER_OP));
        assertRefused(report(OP, "forged"), "not issued");
        assertRefused(report(OP, "k9"), "not issued");
        assertRefused(report(OpSpec.newBuilder(OP).setShape(0, 7).build(), "k1"), "never offered");
        assertRefused(report(OP, "k1", "k1"), "twice");
        assertRefused(report(OP), "1 to 5");
        assertRefused(Report.newBuilder().setOp(OP).addRanked(RankedKernel.newBuilder().setKernelId("k1")
                .setMedianMs(Double.NaN)).build(), "latency");
        session.acceptReport(report(OP, "k1"), 5, 0);
        assertRefused(report(OP, "k1"), "already");
    }

    /**
     * A report is held, before it is acknowledged, to the ceiling its device kind's measured peak
     * implies (twice the peak; the backend's own where none was measured), and carries that
     * ceiling to the zoo: nothing acknowledged is refused there later for being too fast.
     */
    @Test
    void refusesALatencyFasterThanTheDeviceKindCanReachAndStampsTheCeiling() {
        session.enqueue(offer("k1", OP));
        Session fresh = new Session("s0", session.hello());
        fresh.enqueue(offer("k1", OP));
        KernelReport unmeasured = fresh.acceptReport(report(OP, "k1"), 5, 0);
        assertEquals(LatencyRules.WASM_FLOPS_CEILING / 1e9, unmeasured.getCeilingGflops(), "no peak measured: Wasm's own ceiling");

        session.holdTo(1); // the zoo measured this kind at 1 GFLOP/s: 2 GFLOP/s at most, 1024 flops take 512 ns
        assertRefused(Report.newBuilder().setOp(OP).addRanked(RankedKernel.newBuilder().setKernelId("k1").setMedianMs(1e-4)).build(),
                "the most its device can reach");
        KernelReport report = session.acceptReport(Report.newBuilder().setOp(OP).addRanked(RankedKernel.newBuilder()
                .setKernelId("k1").setMedianMs(6e-4)).build(), 5, 0);
        assertEquals(2, report.getCeilingGflops(), 1e-9);

        Session lowballed = new Session("s3", session.hello());
        lowballed.holdTo(1e-6); // a forged peak reached the zoo's median: the floor still holds
        lowballed.enqueue(offer("k1", OP));
        assertEquals(2 * LatencyRules.PEAK_FLOOR_GFLOPS, lowballed.acceptReport(report(OP, "k1"), 5, 0).getCeilingGflops(), 1e-9);
    }

    private void assertRefused(Report report, String reason) {
        ProtocolException e = assertThrows(ProtocolException.class, () -> session.acceptReport(report, 5, 0));
        assertEquals(ErrorCode.ERROR_CODE_INVALID_REPORT, e.code());
        assertFalse(e.fatal(), "a bad report does not end the session");
        assertTrue(e.getMessage().contains(reason), e.getMessage());
    }

    private static Report report(OpSpec op, String... ids) {
        Report.Builder report = Report.newBuilder().setOp(op);
        for (String id : ids) {
            report.addRanked(RankedKernel.newBuilder().setKernelId(id).setMedianMs(1.0).setSamples(3));
        }
        return report.build();
    }

    private static KernelOffer offer(String id, OpSpec op) {
        return KernelOffer.newBuilder().setArtifact(KernelArtifact.newBuilder().setRef(ref(id, op))).build();
    }

    private static KernelRef ref(String id, OpSpec op) {
        return KernelRef.newBuilder().setKernelId(id).setOp(op).setBackend(Backend.BACKEND_WASM).build();
    }
}
