package dev.jitzoo.localstack;

import de.bwaldvogel.mongo.MongoServer;
import de.bwaldvogel.mongo.backend.h2.H2Backend;
import de.bwaldvogel.mongo.backend.memory.MemoryBackend;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * A MongoDB-wire-compatible server for machines without {@code mongod}: the official driver
 * talks to it over TCP as to a real MongoDB. Persists to an H2 file, or keeps data in memory.
 */
public final class EmbeddedMongo implements AutoCloseable {

    private final MongoServer server;
    private final String uri;

    private EmbeddedMongo(MongoServer server, String host, int port) {
        this.server = server;
        this.uri = "mongodb://" + host + ":" + port;
    }

    /** Starts a server that keeps data in memory, on a free port of the loopback interface. */
    public static EmbeddedMongo inMemory() {
        MongoServer server = new MongoServer(new MemoryBackend());
        server.bind("127.0.0.1", 0);
        return new EmbeddedMongo(server, "127.0.0.1", server.getLocalAddress().getPort());
    }

    /** Starts a server persisting to {@code dataFile} (an H2 MVStore file). */
    public static EmbeddedMongo persistent(Path dataFile, String host, int port) throws IOException {
        Files.createDirectories(dataFile.toAbsolutePath().getParent());
        MongoServer server = new MongoServer(new H2Backend(dataFile.toString()));
        server.bind(host, port);
        return new EmbeddedMongo(server, host, port);
    }

    public String uri() {
        return uri;
    }

    @Override
    public void close() {
        server.shutdown();
    }

    /** {@code EmbeddedMongo PORT DATA_FILE}: runs until killed, for ./jitzoo up. */
    public static void main(String[] args) throws Exception {
        if (args.length != 2) {
            System.err.println("usage: EmbeddedMongo PORT DATA_FILE");
            System.exit(2);
        }
        EmbeddedMongo mongo = persistent(Path.of(args[1]), "127.0.0.1", Integer.parseInt(args[0]));
        Runtime.getRuntime().addShutdownHook(new Thread(mongo::close));
        System.out.println("embedded MongoDB listening on " + mongo.uri() + ", data in " + args[1]);
        Thread.currentThread().join();
    }
}
