package dev.jitzoo.space.lite;

import dev.jitzoo.proto.kernel.v1.Backend;
import dev.jitzoo.space.domain.OpShapes;

/**
 * The size of the naive space, for reference: every power-of-two split (or none) of each of the six
 * tile sizes (x0, y0, r0 by x1, y1, r1 over N, M, K), times vectorize on/off and five unroll
 * factors (none, 1, 2, 4, 8); on Wasm also relaxed SIMD, packing, loop order (2 each) and the 8
 * subsets of the three codegen passes; on WebGPU cache_read on/off.
 */
public final class NaiveSpace {

    private NaiveSpace() {
    }

    public static long size(OpShapes s, Backend backend) {
        long n = splits(s.n()), m = splits(s.m()), k = splits(s.k());
        long tiles = n * n * m * m * k * k;
        long common = 2 * 5;
        return tiles * common * (backend == Backend.BACKEND_WASM ? 2 * 2 * 2 * 8 : 2);
    }

    /** Powers of two up to the extent, plus "not split". */
    static long splits(int extent) {
        return 2 + (31 - Integer.numberOfLeadingZeros(extent));
    }
}
