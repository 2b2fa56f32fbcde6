package dev.jitzoo.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jitzoo.cli.suite.Suite;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** How pipelines run the CLI's own commands and child processes. */
class SuiteTest {

    @TempDir
    Path dir;

    @Test
    void aCommandsStandardOutputGoesToTheFileAsked() throws Exception {
        Path plans = dir.resolve("plans.json");
        Suite.here().jitzoo(plans, "space", "dynamic", "--shape", "1..8,16,16");
        String json = Files.readString(plans);
        assertTrue(json.startsWith("{\"op\":\"matmul\",\"range\":[1,8]"), json);
    }

    @Test
    void aFailedCommandFailsTheStep() {
        Suite.StepFailed e = assertThrows(Suite.StepFailed.class, () -> Suite.here().jitzoo("space", "--op", "conv9"));
        assertEquals("jitzoo space --op conv9 failed (exit 2)", e.getMessage());
    }

    @Test
    void aChildProcessThatFailsFailsTheStepWithItsStatus() {
        Suite suite = Suite.here();
        assertEquals("x", suite.output("echo", List.of("sh", "-c", "printf x")));
        Suite.StepFailed e = assertThrows(Suite.StepFailed.class,
                () -> suite.run("the check", dir, Map.of("CODE", "3"), List.of("sh", "-c", "exit $CODE")));
        assertEquals("the check failed (exit 3)", e.getMessage());
    }
}
