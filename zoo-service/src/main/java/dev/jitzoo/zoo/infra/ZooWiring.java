package dev.jitzoo.zoo.infra;

import com.mongodb.client.MongoClient;
import dev.jitzoo.zoo.ZooConfig;
import dev.jitzoo.zoo.domain.GuardedCache;
import dev.jitzoo.zoo.domain.Zoo;
import io.lettuce.core.api.StatefulRedisConnection;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Produces;
import jakarta.inject.Singleton;

/**
 * Builds the zoo from its real storage: MongoDB through the official driver, Redis through Lettuce
 * (redis-client), the cache guarded so that a slow or dead Redis only costs lookups their speed.
 */
@ApplicationScoped
public class ZooWiring {

    @Produces
    @Singleton
    Zoo zoo(MongoClient mongo, StatefulRedisConnection<String, byte[]> redis, ZooConfig config) {
        redis.setTimeout(config.cacheTimeout());
        return new Zoo(new MongoReportStore(mongo.getDatabase(config.database())),
                new GuardedCache(new RedisBestKernelCache(redis.sync(), config.cacheTtl()), config.cacheCoolDown()));
    }
}
