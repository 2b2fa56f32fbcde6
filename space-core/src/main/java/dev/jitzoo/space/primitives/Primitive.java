package dev.jitzoo.space.primitives;

import java.util.Locale;

/** The schedule primitives the microbenchmark measures one at a time (names as in its results). */
public enum Primitive {
    /** f32x4 SIMD instead of scalar f32. */
    VECTORIZE,
    /** Two register steps per trip of the k loop. */
    UNROLL,
    /** Column blocks and tiles outside the rows. */
    LOOP_ORDER,
    /** {@code f32x4.relaxed_madd} instead of mul + add (where the device has relaxed SIMD). */
    RELAXED_SIMD,
    /** B packed once into tile-wide panels (when B is constant). */
    CACHE_READ,
    /** The codegen's three Wasm passes. */
    PASSES;

    /** The name in microbenchmark results: {@code loop_order}. */
    public String key() {
        return name().toLowerCase(Locale.ROOT);
    }
}
