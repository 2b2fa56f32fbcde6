package dev.jitzoo.space;

import dev.jitzoo.proto.zoo.v1.Settlement;
import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;

/** Settings of the space service. */
@ConfigMapping(prefix = "jitzoo.space")
public interface SpaceConfig {

    /** Most candidates returned for one op; the lite space is cut to this many, best first. */
    @WithDefault("48")
    int maxCandidates();

    /** Relaxation ratio of Table 1's resource heuristics: 1 keeps only exact fits, lower admits near ones. */
    @WithDefault("0.85")
    double relaxation();

    /**
     * Microbenchmark results of more devices (fleet data), a file or a directory of {@code *.json}
     * (as {@code ./jitzoo microbench} stores them), pooled with the shipped ones; none by default.
     */
    Optional<Path> microbenchResults();

    /**
     * Distinct network origins whose sessions must have ranked a device kind's own best in the zoo
     * for it to be settled: then the extended space sends only the exploitation set (zoo.proto's
     * SETTLEMENT_ORIGINS by default).
     */
    @WithDefault("" + Settlement.SETTLEMENT_ORIGINS_VALUE)
    int settledOrigins();

    /** How long a Compose waits for the zoo's similar devices before it answers with the lite space alone. */
    @WithDefault("PT2S")
    Duration zooTimeout();

    /**
     * How often the fleet's microbenchmark results are read from the zoo and pooled into the
     * primitive table; 0 never reads them.
     */
    @WithDefault("PT1M")
    Duration fleetRefresh();

    /** Consistency threshold θ of the primitive table: a fixed primitive never costs more than this anywhere. */
    @WithDefault("0.05")
    double primitiveThreshold();

    /** Threads composing uKernel plans at once (off the event loop; a plan over thousands of rows takes seconds). */
    @WithDefault("1")
    int planThreads();

    /** Plan requests waiting for a thread; past them a request is refused (RESOURCE_EXHAUSTED) rather than queued. */
    @WithDefault("16")
    int planQueue();
}
