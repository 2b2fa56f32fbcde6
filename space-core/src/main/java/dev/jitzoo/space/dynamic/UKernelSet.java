package dev.jitzoo.space.dynamic;

import dev.jitzoo.proto.kernel.v1.Backend;
import dev.jitzoo.proto.kernel.v1.DeviceProfile;
import dev.jitzoo.proto.kernel.v1.OpKind;
import dev.jitzoo.proto.kernel.v1.OpSpec;
import dev.jitzoo.proto.kernel.v1.Schedule;
import dev.jitzoo.proto.space.v1.Candidate;
import dev.jitzoo.space.domain.InvalidOpException;
import dev.jitzoo.space.domain.OpShapes;
import dev.jitzoo.space.lite.LiteSpace;
import java.util.ArrayList;
import java.util.List;

/**
 * FTuner's uKernel set (its section IV) for a MatMul whose M axis varies over {@code lo..hi}
 * (a sequence length) while K and N stay fixed, on a Wasm device:
 * <ol>
 *   <li>hardware alignment: uKernels of 1, 2, 4, … rows up to the range's power of two, each with
 *       the lite space's first schedule whose register tile rows divide them (no edge tiles);</li>
 *   <li>padding and occupancy (algorithm 1's CrossPick): kept when, at some step of the walk,
 *       Pad ≥ ε and Occ ≥ λ (equations 2 and 3 over every extent of the range);</li>
 *   <li>parallelism bound (SetBound): the lite space's heuristic 4 already keeps every schedule
 *       within the register budget;</li>
 *   <li>multi-axis analysis: enough calls at the largest extent to fill the cores (equation 5), and
 *       compute bound, intensity ≥ ψ · ridge (equations 6 and 7).</li>
 * </ol>
 */
public final class UKernelSet {

    private final int lo;
    private final int hi;
    private final int k;
    private final int n;
    private final Thresholds thresholds;
    private final List<UKernel> kernels;

    private UKernelSet(int lo, int hi, int k, int n, Thresholds thresholds, List<UKernel> kernels) {
        this.lo = lo;
        this.hi = hi;
        this.k = k;
        this.n = n;
        this.thresholds = thresholds;
        this.kernels = List.copyOf(kernels);
    }

    /** Throws {@link InvalidOpException} for a bad range or shape, and when no uKernel passes the filters. */
    public static UKernelSet build(int lo, int hi, int k, int n, DeviceProfile device, LiteSpace space, Thresholds t) {
        if (lo < 1 || hi < lo) {
            throw new InvalidOpException("the dynamic range must be 1 <= lo <= hi, got " + lo + ".." + hi);
        }
        OpShapes.of(matmul(hi, k, n)); // checks K and N
        List<UKernel> kept = new ArrayList<>();
        for (int rows = 1; rows <= OpShapes.padded(hi); rows *= 2) {
            Schedule schedule = alignedSchedule(rows, k, n, device, space);
            if (schedule == null) {
                continue;
            }
            UKernel u = new UKernel(rows, schedule, pad(rows, lo, hi), occupancy(rows, lo, hi, t.cores()),
                    intensity(rows, k, n));
            if (crossPick(u, t) && saturates(u, hi, t) && u.intensity() >= t.psi() * t.ridge()) {
                kept.add(u);
            }
        }
        if (kept.isEmpty()) {
            throw new InvalidOpException("no uKernel for " + lo + ".." + hi + " x " + k + " x " + n
                    + " passes the filters (psi " + t.psi() + " x ridge " + t.ridge() + " flops per byte); lower psi");
        }
        return new UKernelSet(lo, hi, k, n, t, kept);
    }

    /** The first candidate of the lite space for {@code rows} rows whose register tile rows divide them. */
    private static Schedule alignedSchedule(int rows, int k, int n, DeviceProfile device, LiteSpace space) {
        for (Candidate c : space.compose(matmul(rows, k, n), device, Backend.BACKEND_WASM).getCandidatesList()) {
            if (rows % Math.max(1, c.getSchedule().getY0()) == 0) {
                return c.getSchedule();
            }
        }
        return null;
    }

    /** Equation 2: useful rows over computed rows when {@code rows}-row calls alone cover every extent. */
    static double pad(int rows, int lo, int hi) {
        long base = 0;
        long computed = 0;
        for (int s = lo; s <= hi; s++) {
            base += s;
            computed += OpShapes.ceilDiv(s, rows) * rows;
        }
        return (double) base / computed;
    }

    /** Equation 3 averaged over the range: calls over calls rounded up to a multiple of the cores. */
    static double occupancy(int rows, int lo, int hi, int cores) {
        double sum = 0;
        for (int s = lo; s <= hi; s++) {
            sum += occupancy((int) OpShapes.ceilDiv(s, rows), cores);
        }
        return sum / (hi - lo + 1);
    }

    static double occupancy(int calls, int cores) {
        return (double) calls / (OpShapes.ceilDiv(calls, cores) * cores);
    }

    /** Flops per byte of one call: 2·rows·K·N over A's rows and B read, C's rows written (float32). */
    static double intensity(int rows, int k, int n) {
        return 2.0 * rows * k * n / (4.0 * ((long) rows * k + (long) k * n + (long) rows * n));
    }

    /** Algorithm 1's CrossPick: ε walks up and λ down together; kept at the first step where both hold. */
    static boolean crossPick(UKernel u, Thresholds t) {
        for (int step = 0; ; step++) {
            double epsilon = t.epsilonMin() + step * t.epsilonStep();
            double lambda = t.lambdaMax() - step * t.lambdaStep();
            if (epsilon > t.epsilonMax() + 1e-12 || lambda < t.lambdaMin() - 1e-12) {
                return false;
            }
            if (u.pad() >= epsilon && u.occupancy() >= lambda) {
                return true;
            }
        }
    }

    /** Equation 5: at the largest extent the uKernel's calls are at least the cores' active blocks. */
    private static boolean saturates(UKernel u, int hi, Thresholds t) {
        return OpShapes.ceilDiv(hi, u.rows()) >= t.cores();
    }

    /** A MatMul of M, K, N. */
    public static OpSpec matmul(int m, int k, int n) {
        return OpSpec.newBuilder().setKind(OpKind.OP_KIND_MATMUL).addShape(m).addShape(k).addShape(n).build();
    }

    public int lo() {
        return lo;
    }

    public int hi() {
        return hi;
    }

    public int k() {
        return k;
    }

    public int n() {
        return n;
    }

    public Thresholds thresholds() {
        return thresholds;
    }

    /** The kept uKernels, fewest rows first. */
    public List<UKernel> kernels() {
        return kernels;
    }
}
