package dev.jitzoo.codegen;

import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;
import java.time.Duration;

/** Settings of the codegen service. */
@ConfigMapping(prefix = "jitzoo.codegen")
public interface CodegenConfig {

    /** Redis holding generated kernels by id, e.g. {@code redis://127.0.0.1:6390}. Required. */
    String redisUri();

    /** How long a generated kernel stays cached; it can always be generated again. */
    @WithDefault("P7D")
    Duration cacheTtl();
}
