package dev.jitzoo.cli.codegen;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import dev.jitzoo.compiler.kernel.WasmCompiler;
import dev.jitzoo.compiler.wasm.WasmSections;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

class CodegenCliTest extends CliTestSupport {

    @Test
    void writesTheArtifactAndItsMetadataBesideIt() throws IOException {
        Path file = dir.resolve("k.wasm");
        assertEquals(0, run("--op", "matmul", "--shape", "7,13,5", "--schedule",
                "{\"y0\":2,\"x0\":4,\"vectorize\":true,\"packB\":true}", "-o", file.toString()));
        byte[] wasm = Files.readAllBytes(file);
        String metadata = Files.readString(dir.resolve("k.json"));
        assertEquals(metadata, WasmSections.customSection(wasm, WasmCompiler.ABI_SECTION));
        assertTrue(metadata.contains("\"pack\":{\"operand\":\"B\",\"entry\":\"pack_b\",\"floats\":65}"), metadata);
        assertTrue(err.toString().startsWith("wrote " + file), err.toString());
    }

    @Test
    void theMicrobenchmarkPairsDifferInTheirOnePrimitiveOnly() throws IOException {
        Path out = dir.resolve("microbench");
        assertEquals(0, run("microbench", "--out", out.toString(), "--op", "K0"));
        JsonArray suite = JsonParser.parseString(Files.readString(out.resolve("suite.json"))).getAsJsonArray();
        Map<String, Set<String>> expected = Map.of("vectorize", Set.of("vectorize"), "unroll", Set.of("unroll"),
                "loop_order", Set.of("columnsOuter"), "relaxed_simd", Set.of("relaxedSimd"), "cache_read", Set.of("packB"),
                "passes", Set.of("passes"));
        assertEquals(expected.keySet(), suite.asList().stream().map(e -> e.getAsJsonObject().get("primitive").getAsString())
                .collect(Collectors.toSet()));
        for (JsonElement e : suite) {
            JsonObject pair = e.getAsJsonObject();
            JsonObject off = flat(out.resolve(pair.get("off").getAsString().replace(".wasm", ".json")));
            JsonObject on = flat(out.resolve(pair.get("on").getAsString().replace(".wasm", ".json")));
            Set<String> differ = off.keySet().stream().filter(k -> !off.get(k).equals(on.get(k))).collect(Collectors.toSet());
            differ.remove("pack"); // the pack entry comes with packB
            assertEquals(expected.get(pair.get("primitive").getAsString()), differ, pair.toString());
            assertEquals("[384,768,768]", on.get("shape").toString());
        }
    }

    /** A kernel's metadata with the schedule's fields lifted to the top. */
    private static JsonObject flat(Path metadata) throws IOException {
        JsonObject m = JsonParser.parseString(Files.readString(metadata)).getAsJsonObject();
        m.remove("schedule").getAsJsonObject().entrySet().forEach(f -> m.add(f.getKey(), f.getValue()));
        return m;
    }

    @Test
    void printsAListingWithTheChosenPasses() {
        assertEquals(0, run("--op", "K3", "--schedule", "{\"y0\":1,\"x0\":4,\"vectorize\":true}", "--passes", "none", "--print"));
        String listing = out.toString();
        assertTrue(listing.startsWith("(func $batch_matmul (param i32) (param i32) (param i32)"), listing);
        assertTrue(listing.contains("f32x4.splat") && !listing.contains("v128.load32_splat"), "splat pass off");
        out.getBuffer().setLength(0);
        assertEquals(0, run("--op", "K3", "--schedule", "{\"y0\":1,\"x0\":4,\"vectorize\":true}", "--print"));
        assertTrue(out.toString().contains("v128.load32_splat"), "splat pass on");
    }

    @Test
    void badInputIsOneClearLineAndExitCodeTwo() {
        String tile = "{\"y0\":2,\"x0\":4,\"vectorize\":true}";
        List<String[]> cases = List.of(
                new String[] {"--op", "conv2d", "--shape", "1,2,3", "--schedule", tile, "--print"},
                new String[] {"--op", "matmul", "--shape", "7,0,5", "--schedule", tile, "--print"},
                new String[] {"--op", "matmul", "--shape", "7,x,5", "--schedule", tile, "--print"},
                new String[] {"--op", "matmul", "--shape", "7,13,5", "--schedule", "{\"y0\":2,\"z9\":1}", "--print"},
                new String[] {"--op", "matmul", "--shape", "7,13,5", "--schedule", "{\"y0\":", "--print"},
                new String[] {"--op", "matmul", "--shape", "7,13,5", "--schedule", "{\"y0\":8,\"x0\":16,\"vectorize\":true}", "--print"},
                new String[] {"--op", "matmul", "--shape", "7,13,5", "--schedule", tile, "--passes", "unroll", "--print"},
                new String[] {"--op", "matmul", "--shape", "7,13,5", "--schedule", tile, "--backend", "cuda", "--print"},
                new String[] {"--op", "matmul", "--shape", "7,13,5", "--schedule", dir.resolve("missing.json").toString(), "--print"},
                new String[] {"--op", "matmul", "--shape", "7,13,5", "--schedule", tile});
        List<String> reasons = List.of("unknown op 'conv2d'", "must be positive, got 0", "comma-separated integers",
                "unknown schedule field 'z9'", "not valid JSON", "accumulators", "unknown pass 'unroll'",
                "unknown backend 'cuda'", "neither a JSON object nor a readable file", "give -o FILE");
        for (int i = 0; i < cases.size(); i++) {
            err.getBuffer().setLength(0);
            assertEquals(2, run(cases.get(i)), String.join(" ", cases.get(i)));
            String message = err.toString();
            assertTrue(message.startsWith("jitzoo codegen: ") && message.contains(reasons.get(i)), message);
            assertEquals(1, message.lines().count(), message);
        }
    }

    @Test
    void casesWritesPairsOfArtifactAndMetadata() throws IOException {
        Path cases = dir.resolve("cases");
        assertEquals(0, run("cases", "--out", cases.toString(), "--set", "odd", "--count", "12"));
        try (Stream<Path> files = Files.list(cases)) {
            List<Path> all = files.toList();
            long wasm = all.stream().filter(p -> p.toString().endsWith(".wasm")).count();
            assertEquals(wasm, all.stream().filter(p -> p.toString().endsWith(".json")).count());
            assertTrue(wasm >= 10, "kernels written: " + wasm);
        }
        assertEquals(2, run("cases", "--out", cases.toString(), "--set", "everything"));
    }

    @Test
    void casesCompilesRequestsEachDistinctKernelOnceForTheChosenBackend() throws IOException {
        String wasm = "{\"label\":\"K9-dev-wasm-L00\",\"request\":{\"op\":{\"kind\":\"OP_KIND_MATMUL\","
                + "\"shape\":[7,13,5]},\"schedule\":{\"x0\":8,\"y0\":2,\"vectorize\":true,\"packB\":true,"
                + "\"columnsOuter\":true},\"backend\":\"BACKEND_WASM\"}}";
        String wgsl = "{\"label\":\"K9-dev-webgpu-L00\",\"request\":{\"op\":{\"kind\":\"OP_KIND_MATMUL\","
                + "\"shape\":[64,16,64]},\"schedule\":{\"x0\":1,\"y0\":1},\"backend\":\"BACKEND_WGSL\","
                + "\"webgpuLimits\":{\"maxComputeInvocationsPerWorkgroup\":64}}}";
        Path requests = dir.resolve("space.jsonl");
        Files.write(requests, List.of(wasm, wgsl, wasm.replace("L00", "L01"), ""));
        Path out = dir.resolve("lite");
        assertEquals(0, run("cases", "--requests", requests.toString(), "--out", out.toString()));
        List<Path> written = files(out, ".wasm");
        assertEquals(1, written.size(), "the same kernel twice is written once: " + written);
        assertTrue(written.get(0).getFileName().toString().startsWith("K9-dev-wasm-L00-k1"), written.toString());
        String file = written.get(0).getFileName().toString();
        assertEquals("{\"K9-dev-wasm-L00\":\"" + file + "\",\"K9-dev-wasm-L01\":\"" + file + "\"}",
                Files.readString(out.resolve("labels.json")), "every label maps to the one file written");
        assertEquals(0, run("cases", "--requests", requests.toString(), "--out", out.toString(), "--backend", "wgsl"));
        assertEquals(1, files(out, ".wgsl").size());
        String metadata = Files.readString(files(out, ".json").stream()
                .filter(p -> p.getFileName().toString().startsWith("K9-dev-webgpu")).findFirst().orElseThrow());
        assertTrue(metadata.contains("\"workgroupSize\":[8,8,1]"), "16x16 shrunk to the device's 64 invocations: " + metadata);

        Path refused = dir.resolve("refused.jsonl");
        Files.write(refused, List.of(wasm.replace("\"x0\":8", "\"x0\":6")));
        assertEquals(2, run("cases", "--requests", refused.toString(), "--out", out.toString()));
        assertTrue(err.toString().contains("K9-dev-wasm-L00: the space offered a kernel the compiler refuses"), err.toString());
        Files.write(refused, List.of("{\"label\": 3"));
        assertEquals(2, run("cases", "--requests", refused.toString(), "--out", out.toString()));
        assertTrue(err.toString().contains("line 1 is not a {label, request} object"), err.toString());
    }

    @Test
    void cutShapesKeepEveryBlockEdgeAndSplitUnitOfTheRealOne() throws IOException {
        String head = "{\"label\":\"%s\",\"request\":{\"op\":{\"kind\":\"%s\",\"shape\":%s},\"schedule\":%s,\"backend\":\"%s\"}}";
        Path requests = dir.resolve("cut.jsonl");
        Files.write(requests, List.of(
                // rows in tiles of 6: the M block is 192, so 640 keeps its remainder 64 and two blocks
                String.format(head, "k1", "OP_KIND_MATMUL", "[640,768,3072]", "{\"x0\":8,\"y0\":6,\"vectorize\":true,\"unroll\":2}", "BACKEND_WASM"),
                // units of 66 rows: M stays whole; columns in tiles of 12: the N block is 192
                String.format(head, "q4", "OP_KIND_MATMUL_Q4", "[128,384,1536]", "{\"x0\":12,\"y0\":4,\"vectorize\":true,\"unroll\":1,\"relaxedSimd\":true,\"packB\":true,\"columnsOuter\":true,"
                        + "\"splitAxis\":\"SPLIT_AXIS_ROWS\",\"splitGrain\":66}", "BACKEND_WASM"),
                // extents under two blocks stay; batches are cut to 3
                String.format(head, "odd", "OP_KIND_BATCH_MATMUL", "[12,100,40,3]", "{\"x0\":4,\"y0\":2,\"vectorize\":true}", "BACKEND_WASM"),
                // on WGSL the blocks are the workgroup's: 32 rows, 64 columns, k tiles of 16
                String.format(head, "gpu", "OP_KIND_MATMUL", "[384,768,770]", "{\"x0\":4,\"y0\":2,\"x1\":64,\"y1\":32,\"r1\":16,"
                        + "\"vectorize\":true,\"unroll\":4}", "BACKEND_WGSL")));
        Path out = dir.resolve("cut");
        assertEquals(0, run("cases", "--requests", requests.toString(), "--out", out.toString(), "--cut"), err.toString());
        assertEquals(0, run("cases", "--requests", requests.toString(), "--out", out.toString(), "--cut", "--backend", "wgsl"), err.toString());
        Map<String, String> shapes = new java.util.TreeMap<>();
        for (Path meta : files(out, ".json")) {
            String name = meta.getFileName().toString();
            if (!name.equals("labels.json")) {
                shapes.put(name.substring(0, name.indexOf('-')), JsonParser.parseString(Files.readString(meta)).getAsJsonObject().get("shape").toString());
            }
        }
        assertEquals(Map.of("k1", "[448,128,128]", "q4", "[128,128,384]", "odd", "[3,100,40,3]", "gpu", "[64,32,130]"), shapes);
    }
}
