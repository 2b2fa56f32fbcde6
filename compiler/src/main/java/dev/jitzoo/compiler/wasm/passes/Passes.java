package dev.jitzoo.compiler.wasm.passes;

import dev.jitzoo.compiler.wasm.Function;
import java.util.Set;

/** Runs the chosen passes over a function, in the paper's order: offset, combined instruction, load to variable. */
public final class Passes {

    private Passes() {
    }

    /**
     * The function the passes make of {@code function}. The store-to-variable half of {@link Pass#TEE}
     * happens as the body is encoded: pass {@code passes.contains(Pass.TEE)} to the encoder.
     */
    public static Function run(Function function, Set<Pass> passes) {
        Function result = function;
        if (passes.contains(Pass.OFFSET)) {
            result = result.withBody(OffsetFolding.apply(result.body()));
        }
        if (passes.contains(Pass.SPLAT)) {
            result = result.withBody(SplatCombining.apply(result.body()));
        }
        if (passes.contains(Pass.TEE)) {
            result = LoadToVariable.apply(result);
        }
        return result;
    }
}
