package dev.jitzoo.gateway.infra;

import com.google.protobuf.InvalidProtocolBufferException;
import dev.jitzoo.tenant.Digests;
import dev.jitzoo.gateway.GatewayConfig;
import dev.jitzoo.gateway.session.SessionStore;
import dev.jitzoo.proto.gateway.v1.Hello;
import dev.jitzoo.proto.kernel.v1.KernelRef;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.async.RedisAsyncCommands;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import org.jboss.logging.Logger;

/**
 * Sessions in Redis, one hash per session under {@code jitzoo:session:<sha-256 of the token>}
 * (the token itself is never stored): {@code id}, {@code hello}, {@code k:<kernel id>} per kernel
 * issued, {@code s:<kernel id>} per kernel sent, {@code r:<op index>} per op reported. Every write renews the hash's expiry
 * ({@code jitzoo.gateway.resume-ttl}). After the session's first write, its fields go in at most one
 * write in flight per session ({@link CoalescedWrites}): a page's reports, sent all at once, are
 * marked in one or two writes, not one each.
 */
@ApplicationScoped
public class RedisSessionStore implements SessionStore {

    private static final Logger LOG = Logger.getLogger(RedisSessionStore.class);
    private static final String PREFIX = "jitzoo:session:";
    private static final byte[] YES = {1};

    private final RedisAsyncCommands<String, byte[]> redis;
    private final long ttlSeconds;
    /** By token: a key is hashed once a write, not once a field (a page's reports mark a field each). */
    private final CoalescedWrites writes = new CoalescedWrites((token, fields) -> setFields(key(token), fields));

    public RedisSessionStore(StatefulRedisConnection<String, byte[]> redis, GatewayConfig config) {
        this.redis = redis.async();
        this.ttlSeconds = config.resumeTtl().toSeconds();
    }

    @Override
    public Uni<Void> create(String token, String sessionId, Hello hello, List<KernelRef> initial, double kindPeakGflops, String tenant,
                            String pageOrigin) {
        Map<String, byte[]> fields = new HashMap<>();
        for (KernelRef kernel : initial) {
            fields.put("k:" + kernel.getKernelId(), kernel.toByteArray());
            fields.put("s:" + kernel.getKernelId(), YES);
        }
        fields.put("id", sessionId.getBytes(StandardCharsets.UTF_8));
        fields.put("hello", hello.toByteArray());
        fields.put("peak", Double.toString(kindPeakGflops).getBytes(StandardCharsets.UTF_8));
        fields.put("tenant", tenant.getBytes(StandardCharsets.UTF_8));
        fields.put("page", pageOrigin.getBytes(StandardCharsets.UTF_8));
        return Uni.createFrom().completionStage(() -> setFields(key(token), fields)).replaceWithVoid();
    }

    @Override
    public Uni<Void> issued(String token, List<KernelRef> kernels) {
        Map<String, byte[]> fields = new HashMap<>();
        kernels.forEach(kernel -> fields.put("k:" + kernel.getKernelId(), kernel.toByteArray()));
        return write(token, fields);
    }

    @Override
    public Uni<Void> sent(String token, List<String> kernelIds) {
        Map<String, byte[]> fields = new HashMap<>();
        kernelIds.forEach(id -> fields.put("s:" + id, YES));
        return fields.isEmpty() ? Uni.createFrom().voidItem() : write(token, fields);
    }

    @Override
    public CompletionStage<Void> reported(String token, int opIndex) {
        return writes.set(token, Map.of("r:" + opIndex, YES));
    }

    @Override
    public Uni<Optional<Kept>> find(String token) {
        return uni(redis.hgetall(key(token))).map(fields -> {
            if (fields == null || !fields.containsKey("id") || !fields.containsKey("hello")) {
                return Optional.empty();
            }
            try {
                List<KernelRef> issued = new ArrayList<>();
                Set<String> sent = new HashSet<>();
                Set<Integer> reported = new HashSet<>();
                for (Map.Entry<String, byte[]> field : fields.entrySet()) {
                    if (field.getKey().startsWith("k:")) {
                        issued.add(KernelRef.parseFrom(field.getValue()));
                    } else if (field.getKey().startsWith("s:")) {
                        sent.add(field.getKey().substring(2));
                    } else if (field.getKey().startsWith("r:")) {
                        reported.add(Integer.parseInt(field.getKey().substring(2)));
                    }
                }
                byte[] peak = fields.get("peak");
                return Optional.of(new Kept(new String(fields.get("id"), StandardCharsets.UTF_8),
                        Hello.parseFrom(fields.get("hello")), issued, sent, reported,
                        peak == null ? Double.NaN : Double.parseDouble(new String(peak, StandardCharsets.UTF_8)),
                        text(fields.get("tenant")), text(fields.get("page"))));
            } catch (InvalidProtocolBufferException | NumberFormatException e) {
                LOG.warnf("dropping an unreadable kept session: %s", e.toString());
                redis.del(key(token));
                return Optional.empty();
            }
        });
    }

    private static String text(byte[] field) {
        return field == null ? "" : new String(field, StandardCharsets.UTF_8);
    }

    /** Sets the fields, with those set meanwhile on the same session ({@link CoalescedWrites}). */
    private Uni<Void> write(String token, Map<String, byte[]> fields) {
        return Uni.createFrom().completionStage(() -> writes.set(token, fields));
    }

    /**
     * Sets the fields and renews the TTL: both commands sent at once on the connection (one round
     * trip, in order); fails after {@link SessionStore#TIMEOUT}, one timer a write, not a field.
     */
    private CompletionStage<Boolean> setFields(String key, Map<String, byte[]> fields) {
        CompletionStage<Long> set = redis.hset(key, fields);
        CompletionStage<Boolean> expire = redis.expire(key, ttlSeconds);
        return set.thenCompose(ignored -> expire).toCompletableFuture().orTimeout(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
    }

    private static <T> Uni<T> uni(CompletionStage<T> stage) {
        return Uni.createFrom().completionStage(stage);
    }

    private static String key(String token) {
        return PREFIX + Digests.sha256Hex(token, 32);
    }
}
