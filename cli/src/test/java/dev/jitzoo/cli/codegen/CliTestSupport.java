package dev.jitzoo.cli.codegen;

import dev.jitzoo.cli.Jitzoo;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/** What the command-line tests share: a temporary directory, and the command line run with its output captured. */
abstract class CliTestSupport {

    @TempDir
    Path dir;

    final StringWriter out = new StringWriter();
    final StringWriter err = new StringWriter();

    int run(String... args) {
        CommandLine cli = Jitzoo.commandLine();
        cli.setOut(new PrintWriter(out, true)).setErr(new PrintWriter(err, true));
        String[] line = new String[args.length + 1];
        line[0] = "codegen";
        System.arraycopy(args, 0, line, 1, args.length);
        return cli.execute(line);
    }

    /** The files of a directory whose names end with {@code suffix}, sorted. */
    static List<Path> files(Path directory, String suffix) throws IOException {
        try (Stream<Path> files = Files.list(directory)) {
            return files.filter(p -> p.toString().endsWith(suffix)).sorted().toList();
        }
    }
}
