package dev.jitzoo.cli.space;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.util.JsonFormat;
import dev.jitzoo.proto.space.v1.CandidateSource;
import dev.jitzoo.proto.space.v1.ComposeResponse;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** {@code ./jitzoo space}: the lite space alone, or extended from a zoo that may not answer. */
class SpaceCliTest {

    @Test
    void printsTheLiteSpaceAloneWithoutAZooAndSaysWhyWhenTheZooIsDead() throws Exception {
        ComposeResponse lite = run("--op", "K0");
        assertEquals(24, lite.getCandidatesCount());
        assertEquals("", lite.getZooUnavailable());
        assertTrue(lite.getCandidatesList().stream().allMatch(c -> c.getSource() == CandidateSource.CANDIDATE_SOURCE_UNSPECIFIED));

        ComposeResponse dead = run("--op", "K0", "--zoo", "127.0.0.1:1", "--fingerprint", "f");
        assertTrue(dead.getZooUnavailable().equals("the zoo at 127.0.0.1:1 did not answer: UNAVAILABLE (io exception)"),
                dead.getZooUnavailable());
        assertEquals(24, dead.getCandidatesCount(), "the lite space whole");
        assertTrue(dead.getCandidatesList().stream().allMatch(c -> c.getSource() == CandidateSource.CANDIDATE_SOURCE_EXPLORATION));

        ComposeResponse anonymous = run("--op", "K0", "--zoo", "127.0.0.1:1");
        assertFalse(anonymous.getZooUnavailable().isEmpty());
        assertTrue(anonymous.getZooUnavailable().contains("--fingerprint"), anonymous.getZooUnavailable());
    }

    @Test
    void casesOfAFloat16WeightMatmulCoverWebGpuAndOfAnInt8OneWasmOnly() throws Exception {
        Path dir = Files.createTempDirectory("jitzoo-cases");
        Path out = dir.resolve("cases.jsonl");
        assertEquals(0, new CommandLine(new SpaceCli()).execute("cases", "--device", "nvidia-ampere-webgpu", "--out", out.toString(),
                "--op", "matmul_f16:16x64x128,matmul_int8:16x64x128"));
        List<String> lines = Files.readAllLines(out);
        assertTrue(lines.stream().anyMatch(l -> l.contains("MATMUL_F16") && l.contains("-webgpu-L")), "float16-weight WGSL candidates");
        assertTrue(lines.stream().anyMatch(l -> l.contains("MATMUL_F16") && l.contains("-wasm-L")), "and Wasm ones");
        assertTrue(lines.stream().anyMatch(l -> l.contains("MATMUL_INT8") && l.contains("-wasm-L")), "int8 Wasm candidates");
        assertFalse(lines.stream().anyMatch(l -> l.contains("MATMUL_INT8") && l.contains("-webgpu-L")), "no int8 WGSL kernels");
    }

    private static ComposeResponse run(String... args) throws Exception {
        StringWriter captured = new StringWriter();
        assertEquals(0, new CommandLine(new SpaceCli()).setOut(new PrintWriter(captured)).execute(args), String.join(" ", args));
        ComposeResponse.Builder response = ComposeResponse.newBuilder();
        JsonFormat.parser().merge(captured.toString(), response);
        return response.build();
    }
}
