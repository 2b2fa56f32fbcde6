package dev.jitzoo.cli.suite;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * The ONNX models the SDK is tested and measured with (a BERT-base layer, a MiniLM-shaped encoder,
 * import patterns, ONNX's node tests), written by {@code harness/models} into {@code .jitzoo/models}
 * when missing or older than their scripts, with onnx and numpy in a virtual environment of ours.
 */
public final class Models {

    private final Suite suite;
    private final Prereqs prereqs;

    public Models(Suite suite) {
        this.suite = suite;
        this.prereqs = new Prereqs(suite);
    }

    public Path dir() {
        return suite.path(".jitzoo/models");
    }

    /** The models' folder, written first if missing or stale. */
    public Path ensure() {
        prereqs.sdk();
        Path stamp = dir().resolve(".stamp");
        if (Files.exists(stamp) && !Prereqs.newer(suite.path("harness/models"), Prereqs.modified(stamp))
                && !Prereqs.newer(suite.path("client-sdk-js/src/graph/onnx.ts"), Prereqs.modified(stamp))
                && !Prereqs.newer(suite.path("client-sdk-js/src/graph/host"), Prereqs.modified(stamp))) {
            return dir();
        }
        Path python = python();
        Suite.say("writing the test models: BERT-base layer, MiniLM-shaped encoder, import patterns, ONNX node tests (into "
                + dir() + ")");
        Suite.remove(dir());
        suite.run("make_models.py", suite.root(), List.of(python.toString(),
                suite.path("harness/models/make_models.py").toString(), "--out", dir().toString()));
        suite.run("node_tests.py", suite.root(), List.of(python.toString(), suite.path("harness/models/node_tests.py").toString(),
                "--out", dir().resolve("node").toString(), "--ops", supportedOps()));
        try {
            Files.writeString(stamp, "");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return dir();
    }

    /** The ops the SDK's ONNX importer takes (its host ops, one file per family), which decide the node tests worth writing. */
    private String supportedOps() {
        String module = suite.path("client-sdk-js/dist/internal.js").toUri().toString(); // @jitzoo/client/internal
        return suite.output("listing the SDK's ONNX ops", List.of("node", "--input-type=module", "-e",
                "const m = await import('" + module + "'); console.log(Object.keys(m.SUPPORTED_OPS).join(','))")).trim();
    }

    /** Python with onnx and numpy, in {@code .jitzoo/venv}. */
    private Path python() {
        Path venv = suite.path(".jitzoo/venv");
        Path python = venv.resolve("bin/python");
        if (Files.isExecutable(python)
                && suite.exitOf(suite.root(), Map.of(), List.of(python.toString(), "-c", "import onnx, numpy")) == 0) {
            return python;
        }
        if (!Prereqs.onPath("python3")) {
            prereqs.apt("python3", "python3-venv");
        }
        Suite.say("installing onnx and numpy for the test models (pip, into " + venv + ")");
        Suite.remove(venv);
        if (suite.exitOf(suite.root(), Map.of(), List.of("python3", "-m", "venv", venv.toString())) != 0) {
            prereqs.apt("python3-venv");
            suite.run("python3 -m venv", suite.root(), List.of("python3", "-m", "venv", venv.toString()));
        }
        for (int attempt = 1; attempt <= 3; attempt++) {
            if (suite.exitOf(suite.root(), Map.of(), List.of(venv.resolve("bin/pip").toString(), "install", "-q",
                    "--retries", "5", "onnx==1.23.1", "numpy")) == 0) {
                return python;
            }
            Suite.say("pip failed (try " + attempt + " of 3)");
        }
        throw new Suite.StepFailed("pip could not install onnx and numpy");
    }
}
