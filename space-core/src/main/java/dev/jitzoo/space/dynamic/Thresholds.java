package dev.jitzoo.space.dynamic;

/**
 * FTuner's hyperparameters. The padding threshold ε walks up from {@code epsilonMin} while the
 * occupancy bound λ walks down from {@code lambdaMax} (a uKernel is kept at the first step where
 * both hold; the walk ends past {@code epsilonMax} or under {@code lambdaMin}); {@code psi} is the
 * compute-to-memory threshold over the device's {@code ridge} (flops per byte at which a kernel
 * turns compute bound); {@code cores} run uKernel calls at once; {@code c0..c2} weigh the SIA score.
 */
public record Thresholds(double epsilonMin, double epsilonMax, double epsilonStep,
                         double lambdaMax, double lambdaMin, double lambdaStep,
                         double psi, double ridge, int cores, double c0, double c1, double c2) {

    /**
     * The paper's V100 walk (ε 50% → 95% by 1%, λ 95% → 90% by 0.1%), ψ = 1, SIA weights 1, and for
     * Wasm one core (v1 kernels run on one thread) and a ridge of 1 flop per byte: a CPU core's SIMD
     * peak (about 50 GFLOP/s here) over what it streams from L2/L3 (about 50 GB/s).
     */
    public static final Thresholds WASM = new Thresholds(0.50, 0.95, 0.01, 0.95, 0.90, 0.001, 1.0, 1.0, 1, 1, 1, 1);

    public Thresholds {
        check("epsilonMin", epsilonMin, 0, 1);
        check("epsilonMax", epsilonMax, epsilonMin, 1);
        check("lambdaMin", lambdaMin, 0, 1);
        check("lambdaMax", lambdaMax, lambdaMin, 1);
        if (!(epsilonStep > 0) || !(lambdaStep > 0)) {
            throw new IllegalArgumentException("the walk's steps must be positive, got " + epsilonStep + " and " + lambdaStep);
        }
        if (!(psi >= 0) || !(ridge > 0) || cores < 1) {
            throw new IllegalArgumentException("psi must be >= 0, ridge > 0 and cores >= 1, got " + psi + ", " + ridge + ", " + cores);
        }
    }

    /** The same thresholds with another ψ. */
    public Thresholds withPsi(double value) {
        return new Thresholds(epsilonMin, epsilonMax, epsilonStep, lambdaMax, lambdaMin, lambdaStep, value, ridge, cores, c0, c1, c2);
    }

    private static void check(String name, double value, double min, double max) {
        if (!(value >= min && value <= max)) {
            throw new IllegalArgumentException(name + " must be in [" + min + ", " + max + "], got " + value);
        }
    }
}
