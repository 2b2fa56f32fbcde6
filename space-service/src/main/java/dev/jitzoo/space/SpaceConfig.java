package dev.jitzoo.space;

import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;

/** Settings of the space service. */
@ConfigMapping(prefix = "jitzoo.space")
public interface SpaceConfig {

    /** Most candidates returned for one op; the lite space is cut to this many, best first. */
    @WithDefault("48")
    int maxCandidates();
}
