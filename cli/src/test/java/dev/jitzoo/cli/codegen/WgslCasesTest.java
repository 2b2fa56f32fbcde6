package dev.jitzoo.cli.codegen;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/** {@code ./jitzoo codegen --backend wgsl} and {@code ./jitzoo codegen cases --backend wgsl}. */
class WgslCasesTest extends CliTestSupport {

    @Test
    void writesAShaderAndItsMetadataOrPrintsIt() throws IOException {
        Path file = dir.resolve("k.wgsl");
        assertEquals(0, run("--backend", "wgsl", "--op", "matmul", "--shape", "7,13,5", "--epilogue", "bias,relu",
                "--schedule", "{\"y0\":2,\"x0\":4,\"vectorize\":true,\"r1\":8}", "-o", file.toString()));
        String source = Files.readString(file);
        String metadata = Files.readString(dir.resolve("k.json"));
        assertTrue(source.contains("fn main(") && source.contains("var<workgroup>"), source);
        assertTrue(metadata.contains("\"entry\":\"main\"") && metadata.contains("\"workgroupSize\":[2,4,1]")
                && metadata.contains("\"dispatch\":[1,1,1]"), metadata);
        assertEquals(0, run("--backend", "wgsl", "--op", "K3", "--schedule", "{\"y0\":4,\"x0\":4}", "--print"));
        assertTrue(out.toString().startsWith("// jitzoo batch_matmul [120, 64, 64, 64]"), out.toString());
    }

    @Test
    void refusesWasmOnlyOptionsInOneLine() {
        String tile = "{\"y0\":2,\"x0\":4,\"vectorize\":true}";
        assertEquals(2, run("--backend", "wgsl", "--op", "K0", "--schedule", tile, "--passes", "none", "--print"));
        assertTrue(err.toString().contains("the WGSL backend has none"), err.toString());
        err.getBuffer().setLength(0);
        assertEquals(2, run("--backend", "wgsl", "--op", "K0", "--schedule", "{\"y0\":2,\"x0\":4,\"packB\":true}", "--print"));
        assertTrue(err.toString().startsWith("jitzoo codegen: packB is a Wasm schedule primitive"), err.toString());
        assertEquals(1, err.toString().lines().count());
    }

    @Test
    void oddCasesCoverEveryOpKind() throws IOException {
        assertEquals(0, run("cases", "--backend", "wgsl", "--out", dir.toString(), "--set", "odd", "--count", "40"));
        List<Path> shaders = files(dir, ".wgsl");
        assertTrue(shaders.size() >= 38, "distinct kernels: " + shaders.size());
        assertEquals(shaders.size(), files(dir, ".json").size());
        StringBuilder ops = new StringBuilder();
        for (Path shader : shaders) {
            String name = shader.getFileName().toString().replace(".wgsl", ".json");
            ops.append(Files.readString(dir.resolve(name)));
        }
        for (String op : List.of("matmul", "batch_matmul", "add", "mul", "softmax", "layer_norm")) {
            assertTrue(ops.indexOf("\"op\":\"" + op + "\"") >= 0, op);
        }
        assertTrue(ops.indexOf("\"transposeB\":true") >= 0 && ops.indexOf("gelu_erf") >= 0 && ops.indexOf("residual") >= 0);
    }

    @Test
    void paperCasesAre36SchedulesPerKernel() throws IOException {
        assertEquals(0, run("cases", "--backend", "wgsl", "--out", dir.toString(), "--set", "paper"));
        assertEquals(144, files(dir, ".wgsl").size());
        for (String kernel : List.of("K0", "K1", "K2", "K3")) {
            try (Stream<Path> files = Files.list(dir)) {
                assertEquals(36, files.filter(p -> p.getFileName().toString().startsWith(kernel + "-")
                        && p.toString().endsWith(".wgsl")).count(), kernel);
            }
        }
        assertEquals(36, CasesCommand.wgslPaperGrid().size());
    }
}
