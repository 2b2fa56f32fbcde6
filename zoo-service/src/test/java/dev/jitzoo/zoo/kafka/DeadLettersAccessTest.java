package dev.jitzoo.zoo.kafka;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.Map;
import org.junit.jupiter.api.Test;

/** The dead-letter tools' own Kafka clients reach the broker as the channels do: its security settings, nothing else. */
class DeadLettersAccessTest {

    @Test
    void takesTheSettingsThatReachTheBrokerAndNoOthers() {
        Map<String, Object> kafka = Map.of("bootstrap.servers", "k:9092", "security.protocol", "SASL_SSL",
                "sasl.mechanism", "SCRAM-SHA-512", "sasl.jaas.config", "ScramLoginModule required;",
                "ssl.truststore.location", "/etc/kafka/truststore.jks", "group.id", "g", "auto.offset.reset", "latest");
        assertEquals(Map.of("security.protocol", "SASL_SSL", "sasl.mechanism", "SCRAM-SHA-512",
                "sasl.jaas.config", "ScramLoginModule required;", "ssl.truststore.location", "/etc/kafka/truststore.jks"),
                DeadLetters.access(kafka));
    }

    @Test
    void plaintextNeedsNothing() {
        assertEquals(Map.of(), DeadLetters.access(Map.of("bootstrap.servers", "k:9092")));
    }
}
