package dev.jitzoo.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import dev.jitzoo.tenant.MongoTenantStore;
import dev.jitzoo.tenant.Quotas;
import dev.jitzoo.tenant.Tenant;
import dev.jitzoo.tenant.TenantStore;
import dev.jitzoo.localstack.TestInfra;
import dev.jitzoo.proto.gateway.v1.ClientFrame;
import dev.jitzoo.proto.gateway.v1.ErrorCode;
import dev.jitzoo.proto.gateway.v1.Hello;
import dev.jitzoo.proto.gateway.v1.KernelOffer;
import dev.jitzoo.proto.gateway.v1.RankedKernel;
import dev.jitzoo.proto.gateway.v1.Report;
import dev.jitzoo.proto.gateway.v1.PlanRequest;
import dev.jitzoo.proto.gateway.v1.ServerFrame;
import dev.jitzoo.proto.kernel.v1.Backend;
import dev.jitzoo.proto.kernel.v1.DeviceProfile;
import dev.jitzoo.proto.kernel.v1.OpKind;
import dev.jitzoo.proto.kernel.v1.OpSpec;
import dev.jitzoo.proto.kernel.v1.WasmFeatures;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import java.net.URL;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * API keys, Origins and quotas, against tenants kept in MongoDB (through the real driver) the way
 * {@code ./jitzoo tenant} keeps them: each refusal comes with its Error frame and close code, and
 * the sessions of other tenants go on.
 */
@QuarkusTest
@TestProfile(TenantsTest.KeysRequired.class)
@QuarkusTestResource(value = FakeDownstreams.class, restrictToAnnotatedClass = true)
class TenantsTest {

    private static final String SITE = "https://app.acme.example";

    /** Keys required; a key's tenant read again after a second. */
    public static class KeysRequired implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of("jitzoo.gateway.tenants.require-key", "true", "jitzoo.gateway.tenants.cache-ttl", "PT1S");
        }
    }

    private static MongoClient mongo;
    private static TenantStore store;

    @TestHTTPResource("/v1/session")
    URL endpoint;

    @BeforeAll
    static void directory() {
        mongo = MongoClients.create(TestInfra.mongoUri());
        store = new MongoTenantStore(mongo.getDatabase("jitzoo"));
    }

    @AfterAll
    static void closeDirectory() {
        mongo.close();
    }

    @Test
    void aSessionWithoutAKeyOrWithAWrongOneIsRefusedWhereKeysAreRequired() throws Exception {
        try (TestSocket socket = new TestSocket(endpoint)) {
            assertRefused(socket, ErrorCode.ERROR_CODE_UNAUTHORIZED, "this gateway requires an API key: add ?key=<your key> to the session URL", 1008);
        }
        try (TestSocket socket = new TestSocket(withKey("jz_" + "A".repeat(32)))) {
            assertRefused(socket, ErrorCode.ERROR_CODE_UNAUTHORIZED, "the API key is not one of this gateway's keys (rotated out or never made)", 1008);
        }
        try (TestSocket socket = new TestSocket(withKey("hunter2"))) {
            assertRefused(socket, ErrorCode.ERROR_CODE_UNAUTHORIZED, "the API key is not one of this gateway's keys", 1008);
        }
        assertTrue(TestSocket.metric(endpoint, "jitzoo_gateway_refused_total{code=\"unauthorized\"}") >= 3);
    }

    @Test
    void aKeyWorksOnlyFromItsTenantsOrigins() throws Exception {
        String name = tenant();
        String key = store.create(new Tenant(name, List.of(SITE, "https://*.acme.example"), Quotas.UNLIMITED), Instant.now());
        try (TestSocket foreign = new TestSocket(withKey(key), Map.of("Origin", "https://evil.example"))) {
            assertRefused(foreign, ErrorCode.ERROR_CODE_FORBIDDEN_ORIGIN, "tenant " + name + "'s key may not be used from https://evil.example", 1008);
        }
        try (TestSocket none = new TestSocket(withKey(key))) {
            assertRefused(none, ErrorCode.ERROR_CODE_FORBIDDEN_ORIGIN, "tenant " + name + "'s key is for pages of its origins; this client sent no Origin", 1008);
        }
        for (String origin : List.of(SITE, "https://docs.acme.example")) {
            try (TestSocket allowed = new TestSocket(withKey(key), Map.of("Origin", origin))) {
                allowed.send(hello(33, 10)); // at once: the key's lookup finishes before any frame is read
                allowed.await(ServerFrame::hasWelcome, "Welcome from " + origin);
            }
        }
        assertTrue(FakeDownstreams.tenantsAsked().contains("Compose " + name),
                "the space is told the session's tenant (and tells the zoo): " + FakeDownstreams.tenantsAsked());
        assertFalse(FakeDownstreams.tenantsAsked().contains("Resolve " + name),
                "a Hello asks the zoo once, through the space: " + FakeDownstreams.tenantsAsked());
    }

    @Test
    void aTenantOverItsSessionQuotaIsToldToComeBackLaterAndOthersGoOn() throws Exception {
        String tight = tenant();
        String tightKey = store.create(new Tenant(tight, List.of("*"), new Quotas(2, 0, 0)), Instant.now());
        String other = store.create(new Tenant(tenant(), List.of("*"), Quotas.UNLIMITED), Instant.now());
        List<TestSocket> served = new ArrayList<>();
        try {
            for (int i = 0; i < 2; i++) {
                TestSocket socket = new TestSocket(withKey(tightKey));
                served.add(socket);
                socket.send(hello(33, 0));
                socket.await(ServerFrame::hasWelcome, "Welcome within the quota");
            }
            try (TestSocket third = new TestSocket(withKey(tightKey))) {
                third.send(hello(33, 0));
                assertRefused(third, ErrorCode.ERROR_CODE_QUOTA_EXCEEDED, "tenant " + tight + " started its 2 sessions a minute: try again later", 1013);
            }
            try (TestSocket elsewhere = new TestSocket(withKey(other))) {
                elsewhere.send(hello(33, 10));
                elsewhere.await(ServerFrame::hasWelcome, "another tenant's Welcome");
            }
            for (TestSocket socket : served) {
                socket.send(ClientFrame.newBuilder().setCredit(dev.jitzoo.proto.gateway.v1.Credit.newBuilder().setCredits(1)));
                socket.await(ServerFrame::hasOffer, "an offer: the tenant's first sessions go on");
                assertTrue(socket.isOpen());
            }
            assertTrue(TestSocket.metric(endpoint, "jitzoo_gateway_refused_total{code=\"quota_exceeded\"}") >= 1);
        } finally {
            served.forEach(TestSocket::close);
        }
    }

    @Test
    void aReportOverTheQuotaIsRefusedAndTheSessionGoesOn() throws Exception {
        String name = tenant();
        String key = store.create(new Tenant(name, List.of("*"), new Quotas(0, 1, 0)), Instant.now());
        try (TestSocket socket = new TestSocket(withKey(key))) {
            OpSpec first = matmul(33);
            OpSpec second = matmul(34);
            socket.send(ClientFrame.newBuilder().setHello(Hello.newBuilder().setProtocolVersion(1).setBackend(Backend.BACKEND_WASM)
                    .setDevice(DeviceProfile.newBuilder().setFingerprint("tenants-test")).addOps(first).addOps(second).setCredits(20)));
            ServerFrame welcome = socket.await(ServerFrame::hasWelcome, "Welcome");
            socket.send(report(first, welcome.getWelcome().getInitial(0).getArtifact().getRef().getKernelId()));
            assertEquals(first, socket.await(f -> f.hasReportAck() || f.hasError(), "ReportAck").getReportAck().getOp());
            socket.send(report(second, welcome.getWelcome().getInitial(1).getArtifact().getRef().getKernelId()));
            ServerFrame refused = socket.await(f -> f.hasReportAck() || f.hasError(), "the refusal");
            assertEquals(ErrorCode.ERROR_CODE_QUOTA_EXCEEDED, refused.getError().getCode());
            assertEquals("tenant " + name + " sent its 1 reports a minute: this one is not stored, send it again later",
                    refused.getError().getMessage());
            assertTrue(socket.isOpen(), "the session goes on");
        }
    }

    @Test
    void aPlanRequestOverTheQuotaIsRefusedBeforeTheSpaceIsAskedAndTheConnectionGoesOn() throws Exception {
        String name = tenant();
        String key = store.create(new Tenant(name, List.of("*"), new Quotas(0, 0, 0, 1)), Instant.now());
        try (TestSocket socket = new TestSocket(withKey(key))) {
            ClientFrame.Builder plan = ClientFrame.newBuilder().setPlanRequest(PlanRequest.newBuilder().setOp(matmul(64)).setLo(1).setHi(64)
                    .setDevice(DeviceProfile.newBuilder().setFingerprint("tenants-test").setWasm(WasmFeatures.newBuilder().setSimd(true))));
            socket.send(plan);
            ServerFrame first = socket.await(f -> f.hasDynamicPlan() || f.hasError(), "the first answer");
            // the fake space does not plan: the first is asked of it and not answered, within the quota
            assertEquals(ErrorCode.ERROR_CODE_UNAVAILABLE, first.getError().getCode(), first.toString());
            socket.send(plan);
            ServerFrame refused = socket.await(f -> f.hasDynamicPlan() || f.hasError(), "the refusal");
            assertEquals(ErrorCode.ERROR_CODE_QUOTA_EXCEEDED, refused.getError().getCode());
            assertEquals("tenant " + name + " asked for its 1 plans a minute: ask again later", refused.getError().getMessage());
            assertTrue(socket.isOpen(), "the connection goes on");
        }
    }

    @Test
    void offersStopAtTheTenantsQuotaAndOffersDoneSaysWhy() throws Exception {
        String name = tenant();
        String key = store.create(new Tenant(name, List.of("*"), new Quotas(0, 0, 2)), Instant.now());
        try (TestSocket socket = new TestSocket(withKey(key))) {
            socket.send(hello(33, 10));
            socket.await(ServerFrame::hasWelcome, "Welcome");
            List<KernelOffer> offers = new ArrayList<>();
            ServerFrame frame;
            while (!(frame = socket.await(f -> f.hasOffer() || f.hasOffersDone(), "offers")).hasOffersDone()) {
                offers.add(frame.getOffer());
            }
            assertEquals(2, offers.size(), "two of the five candidates");
            assertEquals("tenant " + name + " was sent its 2 offers a minute: offers end here", frame.getOffersDone().getCutShort());
            assertTrue(socket.isOpen());
        }
    }

    @Test
    void aRotatedOutKeyStopsWorkingWithinTheCacheTtlAndTheNewOneWorks() throws Exception {
        String name = tenant();
        String old = store.create(new Tenant(name, List.of("*"), Quotas.UNLIMITED), Instant.now());
        try (TestSocket socket = new TestSocket(withKey(old))) {
            socket.send(hello(33, 0));
            socket.await(ServerFrame::hasWelcome, "Welcome with the first key");
        }
        String fresh = store.rotate(name, Duration.ZERO, Instant.now());
        Instant deadline = Instant.now().plusSeconds(10);
        ErrorCode seen = ErrorCode.ERROR_CODE_UNSPECIFIED;
        while (seen != ErrorCode.ERROR_CODE_UNAUTHORIZED && Instant.now().isBefore(deadline)) {
            Thread.sleep(500);
            try (TestSocket socket = new TestSocket(withKey(old))) {
                try {
                    socket.send(hello(33, 0));
                } catch (java.util.concurrent.ExecutionException refusedFirst) {
                    // the gateway refused the key and closed before the Hello went out: its Error frame came
                }
                ServerFrame answer = socket.await(f -> f.hasWelcome() || f.hasError(), "an answer");
                seen = answer.hasError() ? answer.getError().getCode() : seen;
            }
        }
        assertEquals(ErrorCode.ERROR_CODE_UNAUTHORIZED, seen, "the old key refused within seconds of its rotation");
        try (TestSocket socket = new TestSocket(withKey(fresh))) {
            socket.send(hello(33, 0));
            socket.await(ServerFrame::hasWelcome, "Welcome with the new key");
        }
    }

    private static void assertRefused(TestSocket socket, ErrorCode code, String message, int closeCode) throws Exception {
        ServerFrame refused = socket.await(ServerFrame::hasError, "the refusal");
        assertEquals(code, refused.getError().getCode());
        assertEquals(message, refused.getError().getMessage());
        assertEquals(closeCode, socket.closed().code());
    }

    private URL withKey(String key) throws Exception {
        return new URL(endpoint + "?key=" + key);
    }

    private static String tenant() {
        return "t-" + UUID.randomUUID().toString().substring(0, 8);
    }

    private static ClientFrame.Builder report(OpSpec op, String kernelId) {
        return ClientFrame.newBuilder().setReport(Report.newBuilder().setOp(op)
                .addRanked(RankedKernel.newBuilder().setKernelId(kernelId).setMedianMs(0.5).setSamples(5)));
    }

    private static OpSpec matmul(int m) {
        return OpSpec.newBuilder().setKind(OpKind.OP_KIND_MATMUL).addShape(m).addShape(8).addShape(8).build();
    }

    private static ClientFrame.Builder hello(int m, int credits) {
        return ClientFrame.newBuilder().setHello(Hello.newBuilder().setProtocolVersion(1).setBackend(Backend.BACKEND_WASM)
                .setDevice(DeviceProfile.newBuilder().setFingerprint("tenants-test")).addOps(matmul(m)).setCredits(credits));
    }
}
