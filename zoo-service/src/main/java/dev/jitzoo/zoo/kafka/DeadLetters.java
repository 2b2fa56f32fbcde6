package dev.jitzoo.zoo.kafka;

import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.LoadingCache;
import com.google.protobuf.InvalidProtocolBufferException;
import dev.jitzoo.proto.records.ReportRecords;
import dev.jitzoo.proto.zoo.v1.MicrobenchReport;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.runtime.Startup;
import io.smallrye.common.annotation.Identifier;
import jakarta.annotation.PreDestroy;
import jakarta.enterprise.context.ApplicationScoped;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.jboss.logging.Logger;

/**
 * The dead-letter topics of the zoo's two channels: what is there and why (the failure strategy's
 * {@code dead-letter-reason} header), and a replay that sends each record not yet replayed back
 * to its channel's topic. Ingest is idempotent, so a record replayed twice is stored once; the
 * replay's own consumer group remembers how far it went.
 */
@ApplicationScoped
@Startup // its depth gauges exist from the start
public class DeadLetters {

    private static final Logger LOG = Logger.getLogger(DeadLetters.class);

    /** The channels and their topics. */
    public enum Channel {
        REPORTS("kernel-reports"), MICROBENCH("microbench-results");

        final String topic;

        Channel(String topic) {
            this.topic = topic;
        }

        String deadLetters() {
            return topic + "-dlq";
        }

        /** The consumer group whose committed offsets say how far the replay went. */
        String replayGroup() {
            return "jitzoo-zoo-replay-" + topic;
        }
    }

    /** One dead-lettered record. */
    public record Letter(int partition, long offset, long timestampMs, String reason, String sessionId) {
    }

    private static final Duration POLL = Duration.ofMillis(500);
    private static final Duration DEPTH_EVERY = Duration.ofSeconds(10);

    private final String bootstrap;
    /** The channels' client settings that reach a broker (security.protocol, sasl.*, ssl.*): the dead-letter clients need them too. */
    private final Map<String, Object> access;

    /** Each channel's depth as last read from Kafka, read again past {@link #DEPTH_EVERY}. */
    private final LoadingCache<Channel, Double> depths = Caffeine.newBuilder().expireAfterWrite(DEPTH_EVERY).build(this::readDepth);
    private final MeterRegistry metrics;
    private final List<Gauge> gauges = new ArrayList<>();

    public DeadLetters(@ConfigProperty(name = "kafka.bootstrap.servers") String bootstrap,
                       @Identifier("default-kafka-broker") Map<String, Object> kafka, MeterRegistry metrics) {
        this.bootstrap = bootstrap;
        this.access = access(kafka);
        this.metrics = metrics;
        for (Channel channel : Channel.values()) {
            gauges.add(Gauge.builder("jitzoo.zoo.dlq.depth", this, d -> d.depth(channel))
                    .description("dead letters not yet replayed (read at most every 10 s)")
                    .tag("channel", channel.name().toLowerCase(Locale.ROOT)).register(metrics));
        }
    }

    /** The gauges go with this instance: a registry that outlives the application (tests restart it) must not read a stale one. */
    @PreDestroy
    void unregister() {
        gauges.forEach(metrics::remove);
    }

    /**
     * How many of the channel's dead letters the replay has not sent back yet: per partition, its
     * end offset less the replay's committed position (or the partition's start). Read from Kafka
     * at most every 10 s; NaN while Kafka cannot be asked.
     */
    public double depth(Channel channel) {
        return depths.get(channel);
    }

    private double readDepth(Channel channel) {
        try (KafkaConsumer<byte[], byte[]> consumer = consumer(channel.replayGroup())) {
            List<TopicPartition> partitions = partitions(consumer, channel.deadLetters());
            Map<TopicPartition, Long> end = consumer.endOffsets(partitions, POLL.multipliedBy(4));
            Map<TopicPartition, Long> start = consumer.beginningOffsets(partitions, POLL.multipliedBy(4));
            Map<TopicPartition, OffsetAndMetadata> replayed = consumer.committed(new HashSet<>(partitions), POLL.multipliedBy(4));
            long total = 0;
            for (TopicPartition p : partitions) {
                OffsetAndMetadata done = replayed.get(p);
                total += end.get(p) - Math.max(start.get(p), done == null ? 0 : done.offset());
            }
            return total;
        } catch (RuntimeException e) {
            LOG.warnf("the depth of %s could not be read: %s", channel.deadLetters(), e.toString());
            return Double.NaN;
        }
    }

    /** The channel's dead letters, oldest first, at most {@code limit}. */
    public List<Letter> list(Channel channel, int limit) {
        List<Letter> letters = new ArrayList<>();
        try (KafkaConsumer<byte[], byte[]> consumer = consumer(null)) {
            List<TopicPartition> partitions = partitions(consumer, channel.deadLetters());
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            Map<TopicPartition, Long> end = consumer.endOffsets(partitions);
            while (letters.size() < limit && !reachedEnd(consumer, end)) {
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(POLL)) {
                    if (letters.size() < limit) {
                        letters.add(new Letter(r.partition(), r.offset(), r.timestamp(), header(r, "dead-letter-reason"),
                                sessionOf(channel, r.value())));
                    }
                }
            }
        }
        return letters;
    }

    /** Sends every dead letter not yet replayed back to the channel's topic; returns how many. */
    public int replay(Channel channel) {
        int replayed = 0;
        try (KafkaConsumer<byte[], byte[]> consumer = consumer(channel.replayGroup());
             KafkaProducer<byte[], byte[]> producer = producer()) {
            List<TopicPartition> partitions = partitions(consumer, channel.deadLetters());
            consumer.assign(partitions);
            Map<TopicPartition, Long> end = consumer.endOffsets(partitions);
            while (!reachedEnd(consumer, end)) {
                Map<TopicPartition, OffsetAndMetadata> done = new HashMap<>();
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(POLL)) {
                    producer.send(new ProducerRecord<>(channel.topic, r.key(), r.value())).get(10, TimeUnit.SECONDS);
                    done.put(new TopicPartition(r.topic(), r.partition()), new OffsetAndMetadata(r.offset() + 1));
                    replayed++;
                }
                consumer.commitSync(done);
            }
        } catch (ExecutionException | TimeoutException e) {
            throw new IllegalStateException("the replay stopped after " + replayed + " records: " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("the replay was interrupted after " + replayed + " records", e);
        }
        return replayed;
    }

    private static boolean reachedEnd(KafkaConsumer<byte[], byte[]> consumer, Map<TopicPartition, Long> end) {
        return end.entrySet().stream().allMatch(e -> consumer.position(e.getKey()) >= e.getValue());
    }

    private static List<TopicPartition> partitions(KafkaConsumer<byte[], byte[]> consumer, String topic) {
        var infos = consumer.listTopics(Duration.ofSeconds(10)).get(topic);
        return infos == null ? List.of() : infos.stream().map(p -> new TopicPartition(topic, p.partition())).toList();
    }

    private static String header(ConsumerRecord<byte[], byte[]> record, String name) {
        Header header = record.headers().lastHeader(name);
        return header == null ? "" : new String(header.value(), StandardCharsets.UTF_8);
    }

    private static String sessionOf(Channel channel, byte[] value) {
        try {
            return channel == Channel.REPORTS ? ReportRecords.decode(value).get(0).getSessionId()
                    : MicrobenchReport.parseFrom(value).getSessionId();
        } catch (InvalidProtocolBufferException | NullPointerException e) {
            return "";
        }
    }

    /** Of the broker's client settings, those that reach it: security.protocol, sasl.*, ssl.*. */
    static Map<String, Object> access(Map<String, Object> kafka) {
        Map<String, Object> access = new TreeMap<>();
        kafka.forEach((key, value) -> {
            if (key.startsWith("security.") || key.startsWith("sasl.") || key.startsWith("ssl.")) {
                access.put(key, value);
            }
        });
        return access;
    }

    private KafkaConsumer<byte[], byte[]> consumer(String group) {
        Properties p = new Properties();
        p.putAll(access);
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        if (group != null) {
            p.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        }
        return new KafkaConsumer<>(p, new ByteArrayDeserializer(), new ByteArrayDeserializer());
    }

    private KafkaProducer<byte[], byte[]> producer() {
        Properties p = new Properties();
        p.putAll(access);
        p.put("bootstrap.servers", bootstrap);
        p.put("acks", "all");
        return new KafkaProducer<>(p, new ByteArraySerializer(), new ByteArraySerializer());
    }
}
