package dev.jitzoo.cli.sdk;

import dev.jitzoo.cli.suite.Models;
import dev.jitzoo.cli.suite.Suite;
import java.io.IOException;
import java.nio.file.Files;
import java.util.concurrent.Callable;
import java.util.stream.Stream;
import picocli.CommandLine.Command;

/** {@code jitzoo models}: writes the ONNX models tests and benches use, and lists them. */
@Command(name = "models", mixinStandardHelpOptions = true,
        description = "Writes the ONNX models tests and benches use (.jitzoo/models: a BERT-base layer, a 6-layer "
                + "MiniLM-shaped encoder, import patterns, ONNX's node tests) when missing or stale, and lists them.")
public final class ModelsCommand implements Callable<Integer> {

    @Override
    public Integer call() throws IOException {
        try (Stream<java.nio.file.Path> files = Files.list(new Models(Suite.here()).ensure())) {
            files.filter(p -> p.toString().endsWith(".onnx")).sorted().forEach(System.out::println);
        }
        return 0;
    }
}
