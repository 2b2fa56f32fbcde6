package dev.jitzoo.gateway.session;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jitzoo.proto.gateway.v1.ClientFrame;
import dev.jitzoo.proto.gateway.v1.ErrorCode;
import dev.jitzoo.proto.gateway.v1.Hello;
import dev.jitzoo.proto.gateway.v1.PlanRequest;
import dev.jitzoo.proto.kernel.v1.Backend;
import dev.jitzoo.proto.kernel.v1.DeviceProfile;
import dev.jitzoo.proto.kernel.v1.Epilogue;
import dev.jitzoo.proto.kernel.v1.EpilogueKind;
import dev.jitzoo.proto.kernel.v1.OpKind;
import dev.jitzoo.proto.kernel.v1.OpSpec;
import dev.jitzoo.proto.kernel.v1.WasmFeatures;
import dev.jitzoo.proto.kernel.v1.WebGpuAdapter;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

class FrameRulesTest {

    private final FrameRules rules = new FrameRules(1024, 4, 1 << 21, 512);

    private static Hello.Builder validHello() {
        return Hello.newBuilder().setProtocolVersion(1).setBackend(Backend.BACKEND_WASM)
                .setDevice(DeviceProfile.newBuilder().setFingerprint("fp"))
                .addOps(OpSpec.newBuilder().setKind(OpKind.OP_KIND_MATMUL).addShape(3).addShape(5).addShape(7));
    }

    @Test
    void parsesAValidHello() {
        byte[] bytes = ClientFrame.newBuilder().setHello(validHello()).build().toByteArray();
        ClientFrame frame = rules.parse(bytes);
        rules.checkHello(frame.getHello());
        assertEquals("fp", frame.getHello().getDevice().getFingerprint());
    }

    @Test
    void servesWgslSessionsForADeviceWithAnAdapter() {
        Hello hello = validHello().setBackend(Backend.BACKEND_WGSL)
                .setDevice(DeviceProfile.newBuilder().setFingerprint("fp").setWebgpu(WebGpuAdapter.newBuilder().setVendor("google")))
                .build();
        rules.checkHello(hello);
    }

    @Test
    void garbageTruncationAndEmptyFramesAreMalformed() {
        byte[] hello = ClientFrame.newBuilder().setHello(validHello()).build().toByteArray();
        assertMalformed(Arrays.copyOf(hello, hello.length / 2));
        assertMalformed(new byte[] {(byte) 0xff, (byte) 0xff, (byte) 0xff});
        assertMalformed(new byte[0]);
        ProtocolException tooBig = assertThrows(ProtocolException.class, () -> rules.parse(new byte[1025]));
        assertEquals(ProtocolException.MESSAGE_TOO_BIG, tooBig.closeCode());
    }

    @Test
    void refusesHellosItCannotServe() {
        assertBadHello(validHello().clearDevice(), "fingerprint");
        assertBadHello(validHello().setProtocolVersion(2), "protocol_version");
        assertBadHello(validHello().setBackend(Backend.BACKEND_UNSPECIFIED), "use BACKEND_WASM or BACKEND_WGSL");
        assertBadHello(validHello().setBackend(Backend.BACKEND_WGSL), "needs device.webgpu");
        // every string of the profile goes into each report and document: a 60 KB user agent is refused, as is a long adapter feature
        assertBadHello(validHello().setDevice(validHello().getDevice().toBuilder().setUserAgent("x".repeat(60_000))),
                "device.user_agent is longer than 512 characters (60000)");
        assertBadHello(validHello().setDevice(validHello().getDevice().toBuilder().setWebgpu(WebGpuAdapter.newBuilder()
                .addFeatures("shader-f16").addFeatures("y".repeat(513)))), "device.webgpu.features is longer than 512");
        assertBadHello(validHello().clearOps(), "1 to 4 ops");
        assertBadHello(validHello().setOps(0, OpSpec.newBuilder().setKind(OpKind.OP_KIND_MATMUL)
                .addShape(3).addShape(0).addShape(7)), "positive");
        assertBadHello(validHello().setOps(0, OpSpec.newBuilder().setKind(OpKind.OP_KIND_MATMUL)
                .addShape(4096).addShape(4096).addShape(7)), "exceed the limit");
        // 16 × 2^30 × 2^30 wraps around to 0 in 64 bits: still refused as too large
        assertBadHello(validHello().setOps(0, OpSpec.newBuilder().setKind(OpKind.OP_KIND_BATCH_MATMUL)
                .addShape(16).addShape(1 << 30).addShape(1 << 30).addShape(1 << 30)), "operands of 9223372036854775807 elements in all exceed");
        assertBadHello(validHello().setOps(0, OpSpec.newBuilder().setKind(OpKind.OP_KIND_SOFTMAX)
                .addShape(1 << 30).addShape(1 << 30)), "exceed the limit");
        assertBadHello(validHello().setOps(0, OpSpec.newBuilder().setKindValue(77)
                .addShape(3).addShape(3).addShape(7)), "unknown op");
        assertBadHello(validHello().setOps(0, OpSpec.newBuilder().setKind(OpKind.OP_KIND_SOFTMAX)
                .addShape(3).addShape(8).setTransposeB(true)), "matmuls only");
        assertBadHello(validHello().setOps(0, OpSpec.newBuilder().setKind(OpKind.OP_KIND_SOFTMAX)
                .addShape(3).addShape(8).setEpsilon(1e-5f)), "only a layer_norm");
        assertBadHello(validHello().setOps(0, OpSpec.newBuilder().setKind(OpKind.OP_KIND_MATMUL)
                .addShape(3).addShape(3).addShape(7)
                .addEpilogue(Epilogue.newBuilder().setKind(EpilogueKind.EPILOGUE_KIND_BIAS))
                .addEpilogue(Epilogue.newBuilder().setKind(EpilogueKind.EPILOGUE_KIND_BIAS))), "at most one bias");
    }

    @Test
    void servesEveryOpKindOfAModel() {
        OpSpec[] ops = {
            OpSpec.newBuilder().setKind(OpKind.OP_KIND_MATMUL).addShape(16).addShape(768).addShape(512)
                    .addEpilogue(Epilogue.newBuilder().setKind(EpilogueKind.EPILOGUE_KIND_BIAS))
                    .addEpilogue(Epilogue.newBuilder().setKind(EpilogueKind.EPILOGUE_KIND_GELU_ERF)).build(),
            OpSpec.newBuilder().setKind(OpKind.OP_KIND_BATCH_MATMUL).addShape(12).addShape(16).addShape(64).addShape(16)
                    .setTransposeB(true).addEpilogue(Epilogue.newBuilder().setKind(EpilogueKind.EPILOGUE_KIND_SCALE).setValue(0.125f)).build(),
            OpSpec.newBuilder().setKind(OpKind.OP_KIND_SOFTMAX).addShape(192).addShape(16).build(),
            OpSpec.newBuilder().setKind(OpKind.OP_KIND_LAYER_NORM).addShape(16).addShape(768).setEpsilon(1e-12f).build(),
        };
        Hello.Builder hello = validHello().clearOps();
        for (OpSpec op : ops) {
            hello.addOps(op);
        }
        rules.checkHello(hello.build());
    }

    private static PlanRequest.Builder validPlanRequest() {
        return PlanRequest.newBuilder().setLo(1).setHi(512)
                .setDevice(DeviceProfile.newBuilder().setFingerprint("fp").setWasm(WasmFeatures.newBuilder().setSimd(true)))
                .setOp(OpSpec.newBuilder().setKind(OpKind.OP_KIND_MATMUL).addShape(512).addShape(768).addShape(768).setTransposeB(true)
                        .addEpilogue(Epilogue.newBuilder().setKind(EpilogueKind.EPILOGUE_KIND_BIAS)));
    }

    @Test
    void refusesSettingsBeyondWhatEveryClientAndServiceKeeps() {
        // 16 ops per Hello (gateway.proto) and 2^28 elements per op (OpRules): a gateway may lower them, not raise them
        new FrameRules(1024, 16, 1L << 28, 512);
        String ops = assertThrows(IllegalArgumentException.class, () -> new FrameRules(1024, 17, 1 << 20, 512)).getMessage();
        assertTrue(ops.contains("max-ops-per-session must be 1 to 16, got 17"), ops);
        String elements = assertThrows(IllegalArgumentException.class, () -> new FrameRules(1024, 4, (1L << 28) + 1, 512)).getMessage();
        assertTrue(elements.contains("max-operand-elements must be 1 to 268435456"), elements);
    }

    @Test
    void refusesPlanRequestsItCannotServeAndKeepsTheSession() {
        rules.checkPlanRequest(validPlanRequest().build());
        assertBadPlanRequest(validPlanRequest().clearDevice(), "wasm features");
        assertBadPlanRequest(validPlanRequest().setLo(0), "1 <= lo <= hi <= 512, got 0..512");
        assertBadPlanRequest(validPlanRequest().setLo(513), "got 513..512");
        assertBadPlanRequest(validPlanRequest().setHi(-1), "got 1..4294967295");
        assertBadPlanRequest(validPlanRequest().setHi(256), "op's M must be hi (256), got 512");
        assertBadPlanRequest(validPlanRequest().setOp(OpSpec.newBuilder().setKind(OpKind.OP_KIND_LAYER_NORM).addShape(512).addShape(768)),
                "MatMuls only");
        assertBadPlanRequest(validPlanRequest().setOp(OpSpec.newBuilder().setKind(OpKind.OP_KIND_MATMUL).addShape(512).addShape(768)),
                "needs 3 dimensions");
        assertBadPlanRequest(validPlanRequest().setOp(OpSpec.newBuilder().setKind(OpKind.OP_KIND_MATMUL)
                .addShape(512).addShape(1 << 20).addShape(768)), "exceed the limit");
    }

    private void assertBadPlanRequest(PlanRequest.Builder request, String reason) {
        ProtocolException e = assertThrows(ProtocolException.class, () -> rules.checkPlanRequest(request.build()));
        assertEquals(ErrorCode.ERROR_CODE_INVALID_PLAN_REQUEST, e.code());
        assertTrue(!e.fatal(), "the session stays open");
        assertTrue(e.getMessage().contains(reason), e.getMessage());
    }

    private void assertMalformed(byte[] bytes) {
        ProtocolException e = assertThrows(ProtocolException.class, () -> rules.parse(bytes));
        assertEquals(ErrorCode.ERROR_CODE_MALFORMED_FRAME, e.code());
        assertEquals(ProtocolException.INVALID_PAYLOAD, e.closeCode());
    }

    private void assertBadHello(Hello.Builder hello, String reason) {
        ProtocolException e = assertThrows(ProtocolException.class, () -> rules.checkHello(hello.build()));
        assertEquals(ErrorCode.ERROR_CODE_INVALID_HELLO, e.code());
        assertEquals(ProtocolException.POLICY_VIOLATION, e.closeCode());
        assertTrue(e.getMessage().contains(reason), e.getMessage());
    }
}
