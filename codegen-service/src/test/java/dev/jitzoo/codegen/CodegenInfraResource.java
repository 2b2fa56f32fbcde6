package dev.jitzoo.codegen;

import dev.jitzoo.localstack.TestInfra;
import io.quarkus.test.common.QuarkusTestResourceLifecycleManager;
import java.util.Map;

/** A real Redis for the kernel cache (see {@link TestInfra}). */
public class CodegenInfraResource implements QuarkusTestResourceLifecycleManager {

    @Override
    public Map<String, String> start() {
        return Map.of("jitzoo.redis.uri", TestInfra.redisUri());
    }

    @Override
    public void stop() {
        // shared by the JVM; stops when it exits
    }
}
