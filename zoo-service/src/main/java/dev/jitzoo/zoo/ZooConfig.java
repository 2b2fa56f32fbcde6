package dev.jitzoo.zoo;

import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;
import java.time.Duration;

/** Settings of the zoo service. MongoDB and Kafka are set through Quarkus' own keys. */
@ConfigMapping(prefix = "jitzoo.zoo")
public interface ZooConfig {

    /** Redis holding the elected best kernel per zoo key, e.g. {@code redis://127.0.0.1:6390}. Required. */
    String redisUri();

    /** MongoDB database holding reports and elections. */
    @WithDefault("jitzoo")
    String database();

    /** How long an elected kernel stays in the Redis cache before it is read again from MongoDB. */
    @WithDefault("PT1H")
    Duration cacheTtl();
}
