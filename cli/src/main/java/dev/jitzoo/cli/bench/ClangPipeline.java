package dev.jitzoo.cli.bench;

import dev.jitzoo.compiler.kernel.Op;
import dev.jitzoo.compiler.kernel.Schedule;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The conventional way to a Wasm kernel: C source → {@code clang -O3 --target=wasm32 -msimd128} →
 * {@code wasm-ld}, from Debian's clang and lld packages. One {@link #compile} is one candidate's
 * generation, timed end to end as a tuner would pay for it.
 */
final class ClangPipeline {

    record Result(byte[] wasm, long nanos) {
    }

    private final Path work;

    ClangPipeline(Path work) {
        this.work = work;
    }

    /** Whether clang and wasm-ld are installed, with the reason when not. */
    static String unavailableReason() {
        for (String tool : List.of("clang", "wasm-ld")) {
            try {
                Process p = new ProcessBuilder(tool, "--version").redirectErrorStream(true).start();
                p.getInputStream().readAllBytes();
                if (p.waitFor() != 0) {
                    return tool + " --version failed";
                }
            } catch (IOException e) {
                return tool + " is not installed (apt-get install clang lld)";
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return "interrupted";
            }
        }
        return null;
    }

    Result compile(Op op, Schedule schedule) throws IOException, InterruptedException {
        long start = System.nanoTime();
        Path source = work.resolve("kernel.c");
        Path object = work.resolve("kernel.o");
        Path wasm = work.resolve("kernel.wasm");
        Files.writeString(source, CSource.of(op, schedule));
        List<String> clang = new ArrayList<>(List.of("clang", "-O3", "--target=wasm32", "-msimd128", "-nostdlib"));
        if (schedule.relaxedSimd()) {
            clang.add("-mrelaxed-simd");
        }
        clang.addAll(List.of("-c", source.toString(), "-o", object.toString()));
        run(clang);
        run(List.of("wasm-ld", "--no-entry", "--import-memory", "--strip-all", object.toString(), "-o", wasm.toString()));
        byte[] bytes = Files.readAllBytes(wasm);
        return new Result(bytes, System.nanoTime() - start);
    }

    private void run(List<String> command) throws IOException, InterruptedException {
        Process process = new ProcessBuilder(command).directory(work.toFile()).redirectErrorStream(true).start();
        String output = new String(process.getInputStream().readAllBytes());
        if (!process.waitFor(120, TimeUnit.SECONDS) || process.exitValue() != 0) {
            throw new IOException(String.join(" ", command) + " failed:\n" + output);
        }
    }
}
