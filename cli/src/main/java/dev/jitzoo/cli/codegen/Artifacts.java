package dev.jitzoo.cli.codegen;

import dev.jitzoo.compiler.kernel.GeneratedKernel;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/** Writes artifacts the way the harness reads them: the code, and its metadata beside it as {@code .json}. */
final class Artifacts {

    private Artifacts() {
    }

    /** Writes {@code kernel} to {@code file} and its metadata to the sibling {@code .json}; returns that path. */
    static Path write(GeneratedKernel kernel, Path file) throws IOException {
        Path parent = file.toAbsolutePath().getParent();
        if (parent != null) {
            Files.createDirectories(parent);
        }
        Files.write(file, kernel.wasm());
        String name = file.getFileName().toString();
        int dot = name.lastIndexOf('.');
        Path metadata = file.resolveSibling((dot > 0 ? name.substring(0, dot) : name) + ".json");
        Files.writeString(metadata, kernel.metadataJson(), StandardCharsets.UTF_8);
        return metadata;
    }
}
