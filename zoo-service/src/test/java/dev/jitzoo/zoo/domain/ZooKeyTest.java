package dev.jitzoo.zoo.domain;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jitzoo.proto.kernel.v1.Backend;
import dev.jitzoo.proto.kernel.v1.DeviceProfile;
import dev.jitzoo.proto.kernel.v1.Epilogue;
import dev.jitzoo.proto.kernel.v1.EpilogueKind;
import dev.jitzoo.proto.kernel.v1.OpKind;
import dev.jitzoo.proto.kernel.v1.OpSpec;
import dev.jitzoo.proto.kernel.v1.WasmFeatures;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

class ZooKeyTest {

    private static final DeviceProfile DEVICE = DeviceProfile.newBuilder().setFingerprint("f1").setPrimitiveVector("101").build();
    private static final OpSpec MATMUL = OpSpec.newBuilder().setKind(OpKind.OP_KIND_MATMUL).addShape(128).addShape(256).addShape(96).build();

    @Test
    void aPlainMatmulKeepsTheKeyItAlwaysHad() {
        assertEquals("matmul|128x256x96|wasm|101|f1", ZooKey.of(MATMUL, Backend.BACKEND_WASM, DEVICE).asString());
    }

    @Test
    void kernelsSplitForThreadsHaveKeysOfTheirOwnThreadCount() {
        DeviceProfile two = DEVICE.toBuilder().setWasm(WasmFeatures.newBuilder().setThreads(true).setThreadsUsed(2)).build();
        DeviceProfile one = DEVICE.toBuilder().setWasm(WasmFeatures.newBuilder().setThreads(true).setThreadsUsed(1)).build();
        assertEquals("matmul|128x256x96|wasm-t2|101|f1", ZooKey.of(MATMUL, Backend.BACKEND_WASM, two).asString());
        assertEquals("matmul|128x256x96|wasm-t2", ZooKey.of(MATMUL, Backend.BACKEND_WASM, two).opKey());
        assertEquals(ZooKey.of(MATMUL, Backend.BACKEND_WASM, DEVICE), ZooKey.of(MATMUL, Backend.BACKEND_WASM, one));
        assertEquals("matmul|128x256x96|wgsl|101|f1", ZooKey.of(MATMUL, Backend.BACKEND_WGSL, two).asString());
    }

    @Test
    void aTenantsOwnPoolPrefixesEveryKeySoNothingIsShared() {
        ZooKey own = ZooKey.of("acme", MATMUL, Backend.BACKEND_WASM, DEVICE);
        assertEquals("tenant=acme|matmul|128x256x96|wasm|101|f1", own.asString());
        assertEquals("tenant=acme|matmul|128x256x96|wasm", own.opKey());
        assertEquals("matmul|128x256x96|wasm", ZooKey.of("", MATMUL, Backend.BACKEND_WASM, DEVICE).opKey());
    }

    @Test
    void everyFieldThatChangesAKernelChangesTheKey() {
        Epilogue bias = Epilogue.newBuilder().setKind(EpilogueKind.EPILOGUE_KIND_BIAS).build();
        Epilogue gelu = Epilogue.newBuilder().setKind(EpilogueKind.EPILOGUE_KIND_GELU_ERF).build();
        OpSpec norm = OpSpec.newBuilder().setKind(OpKind.OP_KIND_LAYER_NORM).addShape(16).addShape(768).build();
        List<OpSpec> ops = List.of(MATMUL, MATMUL.toBuilder().setTransposeB(true).build(),
                MATMUL.toBuilder().addEpilogue(bias).build(), MATMUL.toBuilder().addEpilogue(bias).addEpilogue(gelu).build(),
                MATMUL.toBuilder().addEpilogue(gelu).addEpilogue(bias).build(),
                MATMUL.toBuilder().addEpilogue(Epilogue.newBuilder().setKind(EpilogueKind.EPILOGUE_KIND_SCALE).setValue(0.125f)).build(),
                MATMUL.toBuilder().addEpilogue(Epilogue.newBuilder().setKind(EpilogueKind.EPILOGUE_KIND_SCALE).setValue(0.25f)).build(),
                norm, norm.toBuilder().setEpsilon(1e-12f).build(),
                OpSpec.newBuilder().setKind(OpKind.OP_KIND_BATCH_MATMUL).addShape(2).addShape(128).addShape(256).addShape(96)
                        .setBroadcastB(true).build());
        Set<String> keys = new HashSet<>();
        for (OpSpec op : ops) {
            assertTrue(keys.add(ZooKey.of(op, Backend.BACKEND_WASM, DEVICE).asString()), op.toString());
        }
    }

    @Test
    void anOpNoKernelCanComputeIsRefused() {
        InvalidReportException e = assertThrows(InvalidReportException.class, () -> ZooKey.of(
                MATMUL.toBuilder().setEpsilon(1e-5f).build(), Backend.BACKEND_WASM, DEVICE));
        assertTrue(e.getMessage().contains("epsilon"), e.getMessage());
    }
}
