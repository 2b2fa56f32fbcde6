package dev.jitzoo.codegen.wasm;

/** A kernel over its size budget: browsers' optimizing tiers slow down badly on giant functions. */
public class KernelTooLargeException extends IllegalArgumentException {
    public KernelTooLargeException(int size, int limit) {
        super("kernel of " + size + " bytes exceeds the budget of " + limit + " bytes");
    }
}
