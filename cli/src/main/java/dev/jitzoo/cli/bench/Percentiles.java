package dev.jitzoo.cli.bench;

import java.util.Arrays;
import java.util.Collection;

/**
 * The order statistics the benches report. Two readings of a percentile are in use, each bench
 * keeping the one its published figures were taken with: {@link #nearestRank} and
 * {@link #rankAbove} differ only where {@code q} times the count is a whole number.
 */
final class Percentiles {

    private Percentiles() {
    }

    /** The middle value, or the mean of the two middle ones; NaN when there are none. */
    static double median(Collection<? extends Number> values) {
        double[] sorted = sorted(values);
        int n = sorted.length;
        if (n == 0) {
            return Double.NaN;
        }
        return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
    }

    /** The least value with at least a share {@code q} of the values at or below it: p50 of 1..100 is 50. NaN when there are none. */
    static double nearestRank(Collection<? extends Number> values, double q) {
        double[] sorted = sorted(values);
        return sorted.length == 0 ? Double.NaN : sorted[Math.min(sorted.length - 1, (int) Math.ceil(q * sorted.length) - 1)];
    }

    /** The least value with more than a share {@code q} of the values at or below it: p50 of 1..100 is 51. NaN when there are none. */
    static double rankAbove(Collection<? extends Number> values, double q) {
        double[] sorted = sorted(values);
        return sorted.length == 0 ? Double.NaN : sorted[Math.min(sorted.length - 1, (int) Math.floor(q * sorted.length))];
    }

    /** The largest value; NaN when there are none. */
    static double max(Collection<? extends Number> values) {
        return nearestRank(values, 1);
    }

    private static double[] sorted(Collection<? extends Number> values) {
        double[] all = values.stream().mapToDouble(Number::doubleValue).toArray();
        Arrays.sort(all);
        return all;
    }
}
