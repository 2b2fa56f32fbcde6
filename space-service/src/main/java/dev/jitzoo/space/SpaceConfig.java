package dev.jitzoo.space;

import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;

/** Settings of the space service. */
@ConfigMapping(prefix = "jitzoo.space")
public interface SpaceConfig {

    /** Most candidates returned for one op; the lite space is cut to this many, best first. */
    @WithDefault("48")
    int maxCandidates();

    /** Relaxation ratio of Table 1's resource heuristics: 1 keeps only exact fits, lower admits near ones. */
    @WithDefault("0.85")
    double relaxation();
}
