package dev.jitzoo.zoo.infra;

import com.mongodb.client.MongoClient;
import dev.jitzoo.zoo.ZooConfig;
import dev.jitzoo.zoo.domain.Zoo;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.codec.ByteArrayCodec;
import io.lettuce.core.codec.RedisCodec;
import io.lettuce.core.codec.StringCodec;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Disposes;
import jakarta.enterprise.inject.Produces;
import jakarta.inject.Singleton;

/** Builds the zoo from its real storage: MongoDB through the official driver, Redis through Lettuce. */
@ApplicationScoped
public class ZooWiring {

    @Produces
    @Singleton
    StatefulRedisConnection<String, byte[]> redis(ZooConfig config) {
        return RedisClient.create(config.redisUri())
                .connect(RedisCodec.of(StringCodec.UTF8, ByteArrayCodec.INSTANCE));
    }

    void closeRedis(@Disposes StatefulRedisConnection<String, byte[]> connection) {
        connection.close();
    }

    @Produces
    @Singleton
    Zoo zoo(MongoClient mongo, StatefulRedisConnection<String, byte[]> redis, ZooConfig config) {
        return new Zoo(new MongoReportStore(mongo.getDatabase(config.database())),
                new RedisBestKernelCache(redis.sync(), config.cacheTtl()));
    }
}
