package dev.jitzoo.compiler.wasm;

/** A module over its size budget: browsers' optimizing tiers slow down badly on giant functions. */
public class KernelTooLargeException extends IllegalArgumentException {

    private final int size;
    private final int limit;

    public KernelTooLargeException(int size, int limit) {
        super("kernel of " + size + " bytes exceeds the budget of " + limit + " bytes");
        this.size = size;
        this.limit = limit;
    }

    public int size() {
        return size;
    }

    public int limit() {
        return limit;
    }
}
