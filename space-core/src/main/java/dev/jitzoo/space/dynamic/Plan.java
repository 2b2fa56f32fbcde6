package dev.jitzoo.space.dynamic;

import java.util.List;

/**
 * How one extent of the dynamic axis is covered: uKernel calls over consecutive row slices, the
 * pieces' rows summing to {@code paddedExtent} (at least the extent; the rows past it are computed
 * into padding that the host allocates and ignores). {@code sia} is FTuner's synthesis index score.
 */
public record Plan(int extent, List<Piece> pieces, int paddedExtent, double sia) {

    /** {@code count} calls of the uKernel of {@code rows} rows, one after another. */
    public record Piece(int rows, int count) {
    }

    public Plan {
        pieces = List.copyOf(pieces);
    }

    /** Kernel calls the plan makes. */
    public int calls() {
        return pieces.stream().mapToInt(Piece::count).sum();
    }
}
