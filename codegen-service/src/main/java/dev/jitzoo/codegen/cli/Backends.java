package dev.jitzoo.codegen.cli;

import dev.jitzoo.codegen.kernel.GeneratedKernel;
import dev.jitzoo.codegen.kernel.Op;
import dev.jitzoo.codegen.kernel.Schedule;
import dev.jitzoo.codegen.kernel.WasmCompiler;
import dev.jitzoo.codegen.wasm.passes.Pass;
import java.util.Locale;
import java.util.Set;

/** The backends the command line can pick. */
final class Backends {

    enum Backend {
        WASM("wasm") {
            @Override
            GeneratedKernel compile(Op op, Schedule schedule, Set<Pass> passes) {
                return COMPILER.compile(op, schedule, passes);
            }
        };

        final String extension;

        Backend(String extension) {
            this.extension = extension;
        }

        abstract GeneratedKernel compile(Op op, Schedule schedule, Set<Pass> passes);
    }

    private static final WasmCompiler COMPILER = new WasmCompiler();

    private Backends() {
    }

    static Backend parse(String name) {
        return switch (name.toLowerCase(Locale.ROOT)) {
            case "wasm" -> Backend.WASM;
            case "wgsl", "webgpu" -> throw new IllegalArgumentException("the WGSL backend is not in this build yet");
            default -> throw new IllegalArgumentException("unknown backend '" + name + "'; known: wasm, wgsl");
        };
    }
}
