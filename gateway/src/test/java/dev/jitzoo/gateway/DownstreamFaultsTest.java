package dev.jitzoo.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jitzoo.proto.gateway.v1.ClientFrame;
import dev.jitzoo.proto.gateway.v1.Credit;
import dev.jitzoo.proto.gateway.v1.Hello;
import dev.jitzoo.proto.gateway.v1.KernelOffer;
import dev.jitzoo.proto.gateway.v1.OffersDone;
import dev.jitzoo.proto.gateway.v1.RankedKernel;
import dev.jitzoo.proto.gateway.v1.Report;
import dev.jitzoo.proto.gateway.v1.ServerFrame;
import dev.jitzoo.proto.kernel.v1.Backend;
import dev.jitzoo.proto.kernel.v1.DeviceProfile;
import dev.jitzoo.proto.kernel.v1.OpKind;
import dev.jitzoo.proto.kernel.v1.OpSpec;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import java.net.URL;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The gateway against downstream services that misbehave ({@link FakeDownstreams}): a candidate
 * codegen refuses costs only itself, a generation stream that stalls ends the offers with the
 * reason and not the session, and a client that grants no credit holds generation without being
 * taken for a stall. Each session can still report.
 */
@QuarkusTest
@TestProfile(DownstreamFaultsTest.Tight.class)
@QuarkusTestResource(value = FakeDownstreams.class, restrictToAnnotatedClass = true)
class DownstreamFaultsTest {

    /** A short RPC timeout, room for two offers waiting for credit, and the space's answers kept past a slow test. */
    public static class Tight implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of("jitzoo.gateway.rpc-timeout", "PT1S", "jitzoo.gateway.max-queued-offers", "2",
                    "jitzoo.gateway.compose-cache-ttl", "PT1M");
        }
    }

    @TestHTTPResource("/v1/session")
    URL endpoint;

    @Test
    void aCandidateCodegenRefusesIsSkippedAndTheSessionGoesOn() throws Exception {
        try (TestSocket socket = new TestSocket(endpoint)) {
            OpSpec op = matmul(FakeDownstreams.REFUSING_M);
            socket.send(hello(op, 10));
            socket.await(ServerFrame::hasWelcome, "Welcome");
            Offers offers = offers(socket);
            // six candidates: the first is the Welcome's, the second of the five left codegen refuses
            assertEquals(List.of(2, 4, 5, 6), offers.x0s());
            assertEquals(4, offers.done().getOffersSent());
            assertEquals("", offers.done().getCutShort());
            assertReported(socket, op, offers.offers().get(0));
        }
    }

    @Test
    void aStalledGenerationEndsTheOffersWithTheReasonAndTheSessionGoesOn() throws Exception {
        try (TestSocket socket = new TestSocket(endpoint)) {
            OpSpec op = matmul(FakeDownstreams.STALLING_M);
            socket.send(hello(op, 10));
            socket.await(ServerFrame::hasWelcome, "Welcome");
            Offers offers = offers(socket);
            assertEquals(List.of(2, 3), offers.x0s(), "the two kernels codegen sent before it stalled");
            assertEquals(2, offers.done().getOffersSent());
            assertEquals("codegen sent no kernel for 1 s", offers.done().getCutShort());
            assertReported(socket, op, offers.offers().get(1));
            assertTrue(TestSocket.metric(endpoint, "jitzoo_gateway_offers_cut_short_total") >= 1);
            for (String series : List.of("jitzoo_gateway_frames_total{type=\"hello\"}", "jitzoo_gateway_frames_total{type=\"report\"}",
                    "jitzoo_gateway_offers_sent_total", "jitzoo_gateway_published_total", "jitzoo_gateway_welcome_seconds_count",
                    "jitzoo_gateway_publish_seconds_count", "jitzoo_gateway_sessions")) {
                assertTrue(TestSocket.metric(endpoint, series) >= 1, series + " counted");
            }
        }
    }

    @Test
    void aClientThatGrantsNoCreditHoldsGenerationWithoutCuttingItShort() throws Exception {
        try (TestSocket socket = new TestSocket(endpoint)) {
            OpSpec op = matmul(33);
            socket.send(hello(op, 0));
            socket.await(ServerFrame::hasWelcome, "Welcome");
            // far past the RPC timeout: generation waits for room (two offers queued), no stall is seen
            assertNull(socket.next(Duration.ofSeconds(3)), "nothing is sent without credit");
            socket.send(ClientFrame.newBuilder().setCredit(Credit.newBuilder().setCredits(10)));
            Offers offers = offers(socket);
            assertEquals(List.of(2, 3, 4, 5, 6), offers.x0s());
            assertEquals("", offers.done().getCutShort());
            assertTrue(socket.isOpen());
        }
    }

    /**
     * A second page of the same kind gets the same kernels, its Welcome's and its offers, from the
     * gateway's memory, and the space's answer too (within {@code compose-cache-ttl}).
     */
    @Test
    void aKindPagesShareIsServedFromTheGatewaysMemoryNotCodegen() throws Exception {
        OpSpec op = matmul(41);
        List<List<String>> served = new ArrayList<>();
        int[] asked = new int[2];
        for (int page = 0; page < 2; page++) {
            try (TestSocket socket = new TestSocket(endpoint)) {
                socket.send(hello(op, 10));
                List<String> kernels = new ArrayList<>(socket.await(ServerFrame::hasWelcome, "Welcome").getWelcome().getInitialList()
                        .stream().map(k -> k.getArtifact().getRef().getKernelId()).toList());
                offers(socket).offers().forEach(o -> kernels.add(o.getArtifact().getRef().getKernelId()));
                served.add(kernels);
                asked[page] = FakeDownstreams.generated(41);
            }
        }
        assertEquals(6, served.get(0).size(), "the Welcome's kernel and five offers: " + served.get(0));
        assertEquals(served.get(0), served.get(1), "the same kernels, in the same order");
        assertEquals(6, asked[0], "codegen made each kernel once");
        assertEquals(asked[0], asked[1], "and was not asked again");
        assertEquals(1, FakeDownstreams.composed(41), "the space was asked once for both pages");
    }

    /**
     * A page that grants no credit and leaves (its offers parked at {@code max-queued-offers}, two
     * here) still leaves every kernel of its kind in the gateway's memory: the next page gets its
     * Welcome and all five offers without codegen being asked again.
     */
    @Test
    void aPageThatLeavesWithoutCreditStillKeepsItsKindsKernels() throws Exception {
        OpSpec op = matmul(43);
        try (TestSocket socket = new TestSocket(endpoint)) {
            socket.send(hello(op, 0));
            socket.await(ServerFrame::hasWelcome, "Welcome");
            assertNull(socket.next(Duration.ofSeconds(1)), "nothing is sent without credit");
        }
        int asked = FakeDownstreams.generated(43);
        assertEquals(6, asked, "codegen made the Welcome's kernel and the batch of five once");
        try (TestSocket socket = new TestSocket(endpoint)) {
            socket.send(hello(op, 10));
            socket.await(ServerFrame::hasWelcome, "Welcome");
            assertEquals(List.of(2, 3, 4, 5, 6), offers(socket).x0s());
        }
        assertEquals(asked, FakeDownstreams.generated(43), "the second page was served from the gateway's memory");
    }

    @Test
    void pagesOfAKindThatOpenTogetherShareCodegensCalls() throws Exception {
        OpSpec op = matmul(FakeDownstreams.SLOW_M);
        String joined = "jitzoo_gateway_codegen_calls_total{call=\"generate_batch\",joined=\"true\"}";
        double joinedBefore = orZero(TestSocket.metric(endpoint, joined));
        List<TestSocket> pages = new ArrayList<>();
        try {
            for (int i = 0; i < 4; i++) { // all four Hellos within codegen's first answer
                TestSocket page = new TestSocket(endpoint);
                pages.add(page);
                page.send(hello(op, 10));
            }
            for (TestSocket page : pages) {
                page.await(ServerFrame::hasWelcome, "Welcome");
                assertEquals(List.of(2, 3, 4, 5, 6), offers(page).x0s(), "every page is offered the whole batch");
            }
        } finally {
            for (TestSocket page : pages) {
                page.close();
            }
        }
        assertEquals(6, FakeDownstreams.generated(FakeDownstreams.SLOW_M),
                "codegen made the Welcome's kernel and the batch of five once for the four pages");
        String page = TestSocket.metrics(endpoint);
        assertEquals(3.0, orZero(TestSocket.metric(page, joined)) - joinedBefore, page);
    }

    private static double orZero(double value) {
        return Double.isNaN(value) ? 0 : value;
    }

    /** The offers a session received, and the OffersDone that ended them. */
    private record Offers(List<KernelOffer> offers, OffersDone done) {
        List<Integer> x0s() {
            return offers.stream().map(o -> o.getArtifact().getRef().getSchedule().getX0()).toList();
        }
    }

    private static Offers offers(TestSocket socket) throws InterruptedException {
        List<KernelOffer> offers = new ArrayList<>();
        for (;;) {
            ServerFrame frame = socket.await(f -> f.hasOffer() || f.hasOffersDone(), "offer or OffersDone");
            if (frame.hasOffersDone()) {
                return new Offers(offers, frame.getOffersDone());
            }
            offers.add(frame.getOffer());
        }
    }

    /** The session still takes a report of an offered kernel: the broker has it, the client is told. */
    private static void assertReported(TestSocket socket, OpSpec op, KernelOffer offer) throws Exception {
        socket.send(ClientFrame.newBuilder().setReport(Report.newBuilder().setOp(op).addRanked(RankedKernel.newBuilder()
                .setKernelId(offer.getArtifact().getRef().getKernelId()).setMedianMs(0.5).setSamples(5))));
        assertEquals(op, socket.await(f -> f.hasReportAck() || f.hasError(), "ReportAck").getReportAck().getOp());
    }

    private static OpSpec matmul(int m) {
        return OpSpec.newBuilder().setKind(OpKind.OP_KIND_MATMUL).addShape(m).addShape(8).addShape(8).build();
    }

    private static ClientFrame.Builder hello(OpSpec op, int credits) {
        return ClientFrame.newBuilder().setHello(Hello.newBuilder().setProtocolVersion(1).setBackend(Backend.BACKEND_WASM)
                .setDevice(DeviceProfile.newBuilder().setFingerprint("faults-test")).addOps(op).setCredits(credits));
    }
}
