package dev.jitzoo.cli.suite;

import com.sun.net.httpserver.HttpServer;
import java.lang.management.ManagementFactory;
import java.net.InetSocketAddress;
import java.util.List;

/**
 * A stand-in for a service's fast-jar in the launcher's tests: prints what it was told, then
 * answers {@code /q/health/ready} on {@code QUARKUS_HTTP_PORT}; with {@code FAKE_EXIT} set, exits
 * at once instead. Only JDK classes, so it runs from a jar of this one class.
 */
public final class FakeService {

    private FakeService() {
    }

    public static void main(String[] args) throws Exception {
        for (String name : List.of("QUARKUS_HTTP_PORT", "QUARKUS_HTTP_HOST", "JITZOO_MONGO_URI", "JITZOO_REDIS_URI",
                "JITZOO_KAFKA_BOOTSTRAP", "JITZOO_ZOO_PORT", "JITZOO_SPACE_PORT", "JITZOO_CODEGEN_PORT", "FAKE_SETTING")) {
            System.out.println(name + "=" + System.getenv(name));
        }
        System.out.println("jvm=" + String.join(" ", ManagementFactory.getRuntimeMXBean().getInputArguments()));
        System.out.flush();
        if (System.getenv("FAKE_EXIT") != null) {
            System.exit(3);
        }
        String host = System.getenv("QUARKUS_HTTP_HOST");
        HttpServer server = HttpServer.create(new InetSocketAddress(host == null ? "0.0.0.0" : host,
                Integer.parseInt(System.getenv("QUARKUS_HTTP_PORT"))), 0);
        server.createContext("/q/health/ready", exchange -> {
            exchange.sendResponseHeaders(200, -1);
            exchange.close();
        });
        server.start();
    }
}
