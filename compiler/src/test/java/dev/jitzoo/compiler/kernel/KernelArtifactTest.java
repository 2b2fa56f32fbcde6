package dev.jitzoo.compiler.kernel;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jitzoo.compiler.wasm.ModuleWalker;
import dev.jitzoo.compiler.wasm.WasmSections;
import dev.jitzoo.compiler.wasm.passes.Pass;
import java.nio.charset.StandardCharsets;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** What a kernel artifact carries besides its code: module layout, ABI metadata, id. */
class KernelArtifactTest {

    private final WasmCompiler compiler = new WasmCompiler();

    @Test
    void moduleHasExactlyTheAbiV1Layout() {
        GeneratedKernel kernel = compiler.compile(Op.batchMatmul(3, 7, 13, 5), FixedCandidates.all().get(2));
        ModuleWalker.Parsed module = ModuleWalker.parse(kernel.wasm());
        assertEquals(List.of(1, 2, 3, 7, 10, 0), module.sectionIds());
        assertEquals(List.of("(i32,i32,i32)->()"), module.functionTypes());
        assertEquals(List.of(new ModuleWalker.Import("env", "memory", 2, 0, 1)), module.imports());
        assertEquals(List.of(0L), module.functionTypeIndices());
        assertEquals(List.of(new ModuleWalker.Export("batch_matmul", 0, 0)), module.exports());
        assertEquals(1, module.bodies().size());
        assertEquals(Set.of(WasmCompiler.ABI_SECTION), module.customSections().keySet());
        assertEquals(kernel.metadataJson(),
                new String(module.customSections().get(WasmCompiler.ABI_SECTION), StandardCharsets.UTF_8));
        assertEquals(kernel.metadataJson(), WasmSections.customSection(kernel.wasm(), WasmCompiler.ABI_SECTION));
    }

    @Test
    void metadataIsTheDocumentedJsonInTheDocumentedKeyOrder() {
        Schedule schedule = Schedule.registerTile(2, 4, true, 0);
        assertEquals("{\"abi\":1,\"op\":\"matmul\",\"shape\":[7,13,5],\"entry\":\"matmul\","
                        + "\"operands\":[\"A\",\"B\",\"C\"],\"operandShapes\":{\"A\":[7,13],\"B\":[13,5],\"C\":[7,5]},"
                        + "\"schedule\":{\"x0\":4,\"y0\":2,\"r0\":0,\"x1\":0,\"y1\":0,\"r1\":0,\"vectorize\":true,\"unroll\":0,"
                        + "\"relaxedSimd\":false,\"packB\":false,\"columnsOuter\":false},"
                        + "\"flops\":910,\"transposeB\":false,\"broadcastB\":false,\"epilogue\":[],"
                        + "\"passes\":[\"offset\",\"splat\",\"tee\"]}",
                compiler.compile(Op.matmul(7, 13, 5), schedule).metadataJson());
    }

    @Test
    void batchMetadataParsesAndCarriesTheBatchOnEveryOperand() {
        Schedule schedule = FixedCandidates.all().get(3);
        GeneratedKernel kernel = compiler.compile(Op.batchMatmul(3, 7, 13, 5), schedule);
        Map<String, Object> meta = MiniJson.object(WasmSections.customSection(kernel.wasm(), WasmCompiler.ABI_SECTION));
        assertEquals(List.of("abi", "op", "shape", "entry", "operands", "operandShapes", "schedule", "flops",
                        "transposeB", "broadcastB", "epilogue", "passes"),
                List.copyOf(meta.keySet()));
        assertEquals(1L, meta.get("abi"));
        assertEquals("batch_matmul", meta.get("op"));
        assertEquals("batch_matmul", meta.get("entry"));
        assertEquals(List.of(3L, 7L, 13L, 5L), meta.get("shape"));
        assertEquals(Map.of("A", List.of(3L, 7L, 13L), "B", List.of(3L, 13L, 5L), "C", List.of(3L, 7L, 5L)),
                meta.get("operandShapes"));
        assertEquals(Map.ofEntries(Map.entry("x0", 16L), Map.entry("y0", 2L), Map.entry("r0", 2L),
                Map.entry("x1", 128L), Map.entry("y1", 16L), Map.entry("r1", 64L), Map.entry("vectorize", true),
                Map.entry("unroll", 1L), Map.entry("relaxedSimd", false), Map.entry("packB", false),
                Map.entry("columnsOuter", false)), meta.get("schedule"));
        assertEquals(2L * 3 * 7 * 13 * 5, meta.get("flops"));
    }

    @Test
    void fusedOperandsJoinTheEntryAndTheMetadata() {
        Op op = Op.batchMatmul(2, 5, 6, 7).withBroadcastB(true).withTransposedB(true)
                .withEpilogue(Epilogue.scale(0.5f), Epilogue.of(Epilogue.Kind.BIAS), Epilogue.of(Epilogue.Kind.RESIDUAL));
        GeneratedKernel kernel = compiler.compile(op, Schedule.registerTile(1, 4, true, 0).withPackB(true));
        Map<String, Object> meta = MiniJson.object(kernel.metadataJson());
        assertEquals(List.of("A", "B", "C", "Bias", "Residual"), meta.get("operands"));
        assertEquals(Map.of("A", List.of(2L, 5L, 6L), "B", List.of(7L, 6L), "C", List.of(2L, 5L, 7L),
                "Bias", List.of(7L), "Residual", List.of(2L, 5L, 7L)), meta.get("operandShapes"));
        assertEquals(List.of(Map.of("kind", "scale", "value", 0.5), Map.of("kind", "bias"), Map.of("kind", "residual")),
                meta.get("epilogue"));
        assertEquals(Map.of("operand", "B", "entry", "pack_b", "floats", 42L), meta.get("pack"));
        assertEquals("(i32,i32,i32,i32,i32)->()", ModuleWalker.parse(kernel.wasm()).functionTypes().get(0));
        assertTrue(KernelIds.canonical(op, Schedule.registerTile(1, 4, true, 0), Backend.WASM, 1, Pass.ALL)
                .endsWith(";transposeB=true;broadcastB=true;epilogue=scale:0.5,bias,residual"));
    }

    @Test
    void jsonStringsAreEscaped() {
        String nasty = "quote\" backslash\\ newline\n tab\t bell\u0007 é";
        String json = new JsonObjectWriter().put(nasty, nasty).toString();
        assertEquals(Map.of(nasty, nasty), MiniJson.object(json));
    }

    @Test
    void bytesAndIdsArePureFunctionsOfTheRequest() {
        Op op = Op.matmul(17, 31, 29);
        Schedule schedule = FixedCandidates.all().get(3);
        GeneratedKernel first = compiler.compile(op, schedule);
        GeneratedKernel again = new WasmCompiler().compile(Op.matmul(17, 31, 29), FixedCandidates.all().get(3));
        assertArrayEquals(first.wasm(), again.wasm());
        assertEquals(first.kernelId(), again.kernelId());
        assertTrue(first.generationNanos() > 0);
    }

    @Test
    void idFollowsTheDocumentedCanonicalText() {
        Op op = Op.matmul(7, 13, 5);
        Schedule schedule = Schedule.registerTile(2, 4, true, 0);
        assertEquals("abi=1;backend=WASM;op=matmul;shape=7,13,5;schedule=4,2,0,0,0,0,true,0",
                KernelIds.canonical(op, schedule, Backend.WASM, 1, Pass.ALL));
        assertEquals("abi=1;backend=WASM;op=matmul;shape=7,13,5;schedule=4,2,0,0,0,0,true,0;relaxed=true;pack=B;passes=offset,tee",
                KernelIds.canonical(op, schedule.withRelaxedSimd(true).withPackB(true), Backend.WASM, 1,
                        Set.of(Pass.OFFSET, Pass.TEE)));
        // pinned: ids are stored in the zoo, so this value must never change for ABI v1
        assertEquals("k13fbd204313c7c9ab8e7e737a8a5a4e", KernelIds.of(op, schedule, Backend.WASM, 1));
        assertEquals(KernelIds.of(op, schedule, Backend.WASM, 1), compiler.compile(op, schedule).kernelId());
    }

    @Test
    void idsTellEveryInputApart() {
        Op op = Op.matmul(8, 8, 8);
        Schedule base = new Schedule(8, 2, 1, 16, 4, 8, true, 2);
        List<String> ids = List.of(
                KernelIds.of(op, base, Backend.WASM, 1),
                KernelIds.of(op, base, Backend.WGSL, 1),
                KernelIds.of(op, base, Backend.WASM, 2),
                KernelIds.of(Op.matmul(8, 8, 9), base, Backend.WASM, 1),
                KernelIds.of(Op.batchMatmul(1, 8, 8, 8), base, Backend.WASM, 1),
                KernelIds.of(op, new Schedule(4, 2, 1, 16, 4, 8, true, 2), Backend.WASM, 1),
                KernelIds.of(op, new Schedule(8, 1, 1, 16, 4, 8, true, 2), Backend.WASM, 1),
                KernelIds.of(op, new Schedule(8, 2, 2, 16, 4, 8, true, 2), Backend.WASM, 1),
                KernelIds.of(op, new Schedule(8, 2, 1, 32, 4, 8, true, 2), Backend.WASM, 1),
                KernelIds.of(op, new Schedule(8, 2, 1, 16, 8, 8, true, 2), Backend.WASM, 1),
                KernelIds.of(op, new Schedule(8, 2, 1, 16, 4, 16, true, 2), Backend.WASM, 1),
                KernelIds.of(op, new Schedule(8, 2, 1, 16, 4, 8, false, 2), Backend.WASM, 1),
                KernelIds.of(op, new Schedule(8, 2, 1, 16, 4, 8, true, 4), Backend.WASM, 1),
                KernelIds.of(op, base.withRelaxedSimd(true), Backend.WASM, 1),
                KernelIds.of(op, base.withPackB(true), Backend.WASM, 1),
                KernelIds.of(op, base, Backend.WASM, 1, Set.of(Pass.OFFSET, Pass.SPLAT)),
                KernelIds.of(op, base, Backend.WASM, 1, Set.of()));
        assertEquals(ids.size(), new HashSet<>(ids).size(), ids.toString());
        ids.forEach(id -> assertTrue(id.matches("k1[0-9a-f]{30}"), id));
        assertNotEquals(ids.get(0), ids.get(1));
    }

    @Test
    void kernelsForLargeShapesStayWithinTheSizeBudget() {
        for (Op op : List.of(Op.matmul(4096, 4096, 4096), Op.matmul(1023, 1021, 1019), Op.batchMatmul(8, 509, 67, 251))) {
            for (Schedule schedule : FixedCandidates.all()) {
                int size = compiler.compile(op, schedule).wasm().length;
                assertTrue(size <= WasmCompiler.MAX_KERNEL_BYTES, op + " " + schedule + ": " + size + " bytes");
            }
        }
    }

    @Test
    void fixedCandidatesAreAShortListValidForAnyShape() {
        List<Schedule> all = FixedCandidates.all();
        assertTrue(all.size() >= 6 && all.size() <= 10, "size " + all.size());
        assertEquals(all.size(), new HashSet<>(all).size(), "no duplicates");
        all.forEach(WasmCompiler::checkSchedule);
        assertTrue(FixedCandidates.forDevice(false).stream().noneMatch(Schedule::vectorize));
        assertTrue(!FixedCandidates.forDevice(false).isEmpty());
        assertEquals(all, FixedCandidates.forDevice(true));
    }
}
