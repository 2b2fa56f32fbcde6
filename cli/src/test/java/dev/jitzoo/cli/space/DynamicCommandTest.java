package dev.jitzoo.cli.space;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/** {@code space dynamic --requests} writes the uKernels whether it prints every plan or one. */
class DynamicCommandTest {

    @Test
    void requestsAreWrittenWithOneExtentToo(@TempDir Path dir) throws IOException {
        for (String[] args : List.of(new String[] {}, new String[] {"--extent", "53"})) {
            Path file = dir.resolve("requests-" + args.length + ".jsonl");
            String[] all = new String[args.length + 5];
            System.arraycopy(new String[] {"dynamic", "--shape", "1..70,37,29", "--requests", file.toString()}, 0, all, 0, 5);
            System.arraycopy(args, 0, all, 5, args.length);
            assertEquals(0, new CommandLine(new SpaceCli()).execute(all), String.join(" ", all));
            List<String> lines = Files.readAllLines(file);
            // 4, 8, 16, 32 and 64 rows: 128 pads 1..70 to 27% useful rows
            assertEquals(5, lines.size(), lines.toString());
            assertTrue(lines.get(0).startsWith("{\"label\":\"ukernel-r4\""), lines.get(0));
        }
    }
}
