package dev.jitzoo.cli.codegen;

import dev.jitzoo.compiler.kernel.GeneratedKernel;
import dev.jitzoo.compiler.kernel.Op;
import dev.jitzoo.compiler.kernel.Schedule;
import dev.jitzoo.compiler.kernel.WasmCompiler;
import dev.jitzoo.compiler.wasm.passes.Pass;
import dev.jitzoo.compiler.wgsl.WgslCompiler;
import java.util.Locale;
import java.util.Set;

/** The backends the command line can pick. */
final class Backends {

    enum Backend {
        WASM("wasm") {
            @Override
            GeneratedKernel compile(Op op, Schedule schedule, Set<Pass> passes) {
                return WASM_COMPILER.compile(op, schedule, passes);
            }
        },
        WGSL("wgsl") {
            /** The Wasm passes do not apply: only "all" (the default) is accepted. */
            @Override
            GeneratedKernel compile(Op op, Schedule schedule, Set<Pass> passes) {
                if (!passes.equals(Pass.ALL)) {
                    throw new IllegalArgumentException("--passes selects Wasm passes; the WGSL backend has none");
                }
                return WGSL_COMPILER.compile(op, schedule);
            }
        };

        final String extension;

        Backend(String extension) {
            this.extension = extension;
        }

        abstract GeneratedKernel compile(Op op, Schedule schedule, Set<Pass> passes);
    }

    private static final WasmCompiler WASM_COMPILER = new WasmCompiler();
    private static final WgslCompiler WGSL_COMPILER = new WgslCompiler();

    private Backends() {
    }

    static Backend parse(String name) {
        return switch (name.toLowerCase(Locale.ROOT)) {
            case "wasm" -> Backend.WASM;
            case "wgsl", "webgpu" -> Backend.WGSL;
            default -> throw new IllegalArgumentException("unknown backend '" + name + "'; known: wasm, wgsl");
        };
    }
}
