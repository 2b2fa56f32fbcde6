package dev.jitzoo.zoo.kafka;

import com.mongodb.MongoBulkWriteException;
import com.mongodb.MongoException;
import com.mongodb.MongoWriteException;
import java.time.Duration;
import java.util.function.Supplier;
import org.jboss.logging.Logger;

/**
 * Runs a consumer's store call until it succeeds while the failure is transient (MongoDB
 * unreachable, timing out, failing over): the record waits, and the partition with it, instead of
 * going to the dead-letter topic, so a report the gateway acknowledged is not lost to an outage.
 * Waits double from 100 ms to 5 s; past {@link #GIVE_UP} (under Kafka's 5-minute poll interval)
 * the failure goes on to the channel's dead-letter topic, from where it can be replayed.
 */
final class UntilStored {

    private static final Logger LOG = Logger.getLogger(UntilStored.class);
    static final Duration GIVE_UP = Duration.ofMinutes(4);

    private UntilStored() {
    }

    static <T> T call(String what, Supplier<T> store) {
        long deadline = System.nanoTime() + GIVE_UP.toNanos();
        long waitMs = 100;
        for (int attempt = 1; ; attempt++) {
            try {
                return store.get();
            } catch (MongoException e) {
                if (!isTransient(e) || System.nanoTime() > deadline) {
                    throw e;
                }
                LOG.warnf("%s not stored (attempt %d), retrying in %d ms: %s", what, attempt, waitMs, e.toString());
                try {
                    Thread.sleep(waitMs);
                } catch (InterruptedException interrupted) {
                    Thread.currentThread().interrupt();
                    throw e;
                }
                waitMs = Math.min(5_000, waitMs * 2);
            }
        }
    }

    /** A write the server refused (not a duplicate: those are skipped before) is about the data, not the server: no retry. */
    static boolean isTransient(MongoException e) {
        return !(e instanceof MongoWriteException || e instanceof MongoBulkWriteException);
    }
}
