package dev.jitzoo.zoo.domain;

import dev.jitzoo.proto.kernel.v1.Backend;
import dev.jitzoo.proto.kernel.v1.DeviceProfile;
import dev.jitzoo.proto.kernel.v1.KernelRef;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What device kinds similar to one device learned about an op: their kernels ranked by how many
 * similar kinds each is as fast as the best on. A kind's timings are relative to its own best
 * (milliseconds on two devices do not compare); a kernel scores, per similar kind that timed it,
 * similarity × (that kind's best / this kernel's time), summed over the kinds.
 */
public final class SimilarKernels {

    private SimilarKernels() {
    }

    /** One kernel's mean reported time on one device kind (one zoo key). */
    public record KindTiming(String kind, DeviceProfile device, KernelRef kernel, double meanMs, int reports) {
    }

    /** A ranked kernel: its score and how many similar kinds timed it. */
    public record Scored(KernelRef kernel, double score, int devices) {
    }

    /** The answer: ranked kernels (at most the limit) and the number of similar kinds behind them. */
    public record Result(List<Scored> kernels, int similarKinds) {
    }

    /**
     * Ranks the kernels timed on kinds similar to {@code device}; timings of {@code ownKind} are left
     * out (that is the device's own election, not its neighbours').
     */
    public static Result rank(List<KindTiming> timings, DeviceProfile device, Backend backend, String ownKind, int limit) {
        Map<String, List<KindTiming>> byKind = new LinkedHashMap<>();
        for (KindTiming t : timings) {
            if (!t.kind().equals(ownKind)) {
                byKind.computeIfAbsent(t.kind(), k -> new ArrayList<>()).add(t);
            }
        }
        Map<String, Scored> byKernel = new LinkedHashMap<>();
        int similarKinds = 0;
        for (List<KindTiming> kind : byKind.values()) {
            double similarity = DeviceSimilarity.of(device, kind.get(0).device(), backend);
            if (similarity < DeviceSimilarity.SIMILAR) {
                continue;
            }
            similarKinds++;
            double best = kind.stream().mapToDouble(KindTiming::meanMs).min().orElseThrow();
            for (KindTiming t : kind) {
                double points = similarity * best / t.meanMs();
                byKernel.merge(t.kernel().getKernelId(), new Scored(t.kernel(), points, 1),
                        (a, b) -> new Scored(a.kernel(), a.score() + b.score(), a.devices() + 1));
            }
        }
        List<Scored> ranked = byKernel.values().stream()
                .sorted(Comparator.comparingDouble(Scored::score).reversed()
                        .thenComparing(s -> s.kernel().getKernelId()))
                .limit(limit)
                .toList();
        return new Result(ranked, similarKinds);
    }
}
