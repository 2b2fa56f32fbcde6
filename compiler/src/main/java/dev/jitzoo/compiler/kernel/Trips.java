package dev.jitzoo.compiler.kernel;

/** How many times a loop body runs: known when the kernel is generated, or read from a local at run time. */
sealed interface Trips {

    /** A trip count baked into the kernel. */
    record Fixed(int count) implements Trips {
    }

    /** A trip count an i32 local holds when the loop starts; the loop does not change that local. */
    record InLocal(int local) implements Trips {
    }

    static Trips fixed(int count) {
        return new Fixed(count);
    }

    static Trips inLocal(int local) {
        return new InLocal(local);
    }
}
