package dev.jitzoo.codegen.wasm.passes;

import dev.jitzoo.codegen.wasm.Function;
import java.util.Set;

/** Runs the chosen passes over a function, in the paper's order: offset, combined instruction, load to variable. */
public final class Passes {

    private Passes() {
    }

    /**
     * Rewrites {@code function} in place. The store-to-variable half of {@link Pass#TEE} happens as
     * the body is encoded: pass {@code passes.contains(Pass.TEE)} to the encoder.
     */
    public static void run(Function function, Set<Pass> passes) {
        if (passes.contains(Pass.OFFSET)) {
            function.body(OffsetFolding.apply(function.body()));
        }
        if (passes.contains(Pass.SPLAT)) {
            function.body(SplatCombining.apply(function.body()));
        }
        if (passes.contains(Pass.TEE)) {
            LoadToVariable.apply(function);
        }
    }
}
