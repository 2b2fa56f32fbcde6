package dev.jitzoo.codegen;

import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;
import java.time.Duration;

/** Settings of the codegen service. Redis is {@code jitzoo.redis.uri} (redis-client). */
@ConfigMapping(prefix = "jitzoo.codegen")
public interface CodegenConfig {

    /** How long a generated kernel stays cached; it can always be generated again. */
    @WithDefault("P7D")
    Duration cacheTtl();

    /** How long one cache call may take: past it the kernel is compiled without the cache. */
    @WithDefault("PT0.25S")
    Duration cacheTimeout();

    /** After a cache call failed, how long requests compile without asking the cache. */
    @WithDefault("PT5S")
    Duration cacheCoolDown();
}
