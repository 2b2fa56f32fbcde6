package dev.jitzoo.codegen.kernel;

/**
 * A point in the kernel space, field for field the proto's {@code jitzoo.kernel.v1.Schedule}.
 * Register tile: y0 rows by x0 columns of C held in registers; r0 splits the reduction.
 * Cache tiles x1, y1, r1. Zero means "not split". unroll: copies of the reduction body (0, 1: none).
 */
public record Schedule(int x0, int y0, int r0, int x1, int y1, int r1, boolean vectorize, int unroll) {

    public static Schedule registerTile(int y0, int x0, boolean vectorize, int unroll) {
        return new Schedule(x0, y0, 0, 0, 0, 0, vectorize, unroll);
    }
}
