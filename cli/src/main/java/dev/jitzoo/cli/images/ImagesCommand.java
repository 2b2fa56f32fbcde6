package dev.jitzoo.cli.images;

import dev.jitzoo.cli.suite.Prereqs;
import dev.jitzoo.cli.suite.Suite;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.time.temporal.IsoFields;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code jitzoo images}: one OCI image per service, built without a container daemon. The base is a
 * Debian root filesystem with a Java runtime, assembled from Debian's archive by mmdebstrap and kept
 * between runs; umoci adds each service's Quarkus fast-jar as two layers (its dependencies, which
 * change seldom, then the application) and writes the image's config; skopeo writes a tarball that
 * {@code docker load} and {@code podman load} take.
 */
@Command(name = "images", mixinStandardHelpOptions = true,
        description = {"Builds the four services' OCI images, and the tune client's (the chart's helm test), without a container",
                "daemon, as tarballs for docker/podman load: a Debian base with a Java runtime (Node.js for tune) and its security updates",
                "(mmdebstrap, kept for a week), then each service's Quarkus fast-jar (the SDK for tune) as two layers (umoci), written by",
                "skopeo to OUT/jitzoo-NAME-TAG.tar as [REGISTRY/]jitzoo/NAME:TAG."})
public final class ImagesCommand implements Callable<Integer> {

    /** The services, by image name, and the folder of each one's Maven module. */
    static final Map<String, String> MODULES = Map.of("gateway", "gateway", "space", "space-service",
            "codegen", "codegen-service", "zoo", "zoo-service");
    /** The port every image serves HTTP and gRPC on (the chart's container port). */
    static final int PORT = 8080;
    /** The user the services run as: not root, in group 0 as OpenShift-style random users are. */
    static final String USER = "185";
    /**
     * The entrypoint's search path, in the config: runtimes that set none of their own (podman's
     * kube play is one) find {@code java} by it.
     */
    static final String PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
    /** The image of the SDK's tune CLI, which the chart's {@code helm test} runs against the gateway. */
    static final String TUNE = "tune";

    /** A Debian root filesystem images start from: the suite, the packages it adds, the user's home, and its layer's comment. */
    record Base(String suite, List<String> packages, String home, String comment) {
    }

    /** The services' base: Debian 12 and its Java 17 runtime. */
    static final Base JAVA = new Base("bookworm", List.of("openjdk-17-jre-headless", "ca-certificates"), "/deployments",
            "Debian bookworm, Java 17");
    /** The tune client's base: Debian 13, whose Node.js (20) the SDK needs. */
    static final Base NODE = new Base("trixie", List.of("nodejs", "ca-certificates"), "/app", "Debian trixie, Node.js");

    @Parameters(arity = "0..*", paramLabel = "NAME", description = "gateway, space, codegen, zoo, tune (default: all five)")
    List<String> services = new ArrayList<>();

    @Option(names = "--out", paramLabel = "DIR", description = "where the tarballs go (default: .jitzoo/images)")
    Path out;

    @Option(names = "--tag", description = "the images' tag (default: the chart's appVersion, helm/jitzoo/Chart.yaml)")
    String tag;

    @Option(names = "--registry", defaultValue = "", paramLabel = "REGISTRY",
            description = "a registry prefix for the images' names, as the chart's image.registry: REGISTRY/jitzoo/SERVICE (default: none)")
    String registry;

    @Option(names = "--new-base", description = "assemble the Debian base again, though one is kept")
    boolean newBase;

    private final Suite suite = Suite.here();

    @Override
    public Integer call() throws IOException {
        List<String> chosen = services.isEmpty() ? List.of("gateway", "space", "codegen", "zoo", TUNE) : services;
        for (String service : chosen) {
            if (!MODULES.containsKey(service) && !TUNE.equals(service)) {
                throw new IllegalArgumentException("unknown image '" + service + "'; images: gateway, space, codegen, zoo, tune");
            }
        }
        String version = tag != null ? tag : chartAppVersion();
        Path dir = out != null ? out.toAbsolutePath() : suite.home().resolve("images");
        Files.createDirectories(dir);
        tools();
        Path work = Suite.tempDir("jitzoo-images.");
        Path layout = work.resolve("oci");
        try {
            umoci("new layout", "init", "--layout", layout.toString());
            for (Base base : chosen.stream().map(s -> TUNE.equals(s) ? NODE : JAVA).distinct().toList()) {
                baseImage(layout, base, base(dir.resolve("base"), base), work.resolve("bundle"));
            }
            for (String service : chosen) {
                Path tarball = dir.resolve("jitzoo-" + service + "-" + version + ".tar");
                if (TUNE.equals(service)) {
                    tuneImage(layout, version, tarball);
                } else {
                    serviceImage(layout, service, version, tarball);
                }
                Suite.say(service + ": " + tarball + " (" + reference(service, version) + ", "
                        + Files.size(tarball) / (1 << 20) + " MiB)");
            }
        } finally {
            Suite.remove(work);
        }
        return 0;
    }

    private void tools() {
        List<String> missing = new ArrayList<>();
        for (String[] tool : new String[][] {{"mmdebstrap", "mmdebstrap"}, {"umoci", "umoci"}, {"skopeo", "skopeo"}}) {
            if (!Prereqs.onPath(tool[0])) {
                missing.add(tool[1]);
            }
        }
        if (!missing.isEmpty()) {
            new Prereqs(suite).apt(missing.toArray(String[]::new));
        }
    }

    /**
     * A base root filesystem as a tarball, kept under a name that hashes what went into it: the
     * Debian suite (minbase) with its updates and security archives, the base's packages, the user
     * {@value #USER}; and the week, so that a base is at most a week behind the security archive.
     */
    private Path base(Path dir, Base base) throws IOException {
        String suiteName = base.suite();
        List<String> command = new ArrayList<>(List.of("mmdebstrap", "--quiet", "--format=tar", "--variant=minbase", "--include=" + String.join(",", base.packages()),
                // documentation and translations: no use in a server image, a fifth of its size
                "--dpkgopt=path-exclude=/usr/share/doc/*", "--dpkgopt=path-exclude=/usr/share/man/*",
                "--dpkgopt=path-exclude=/usr/share/locale/*", "--dpkgopt=path-include=/usr/share/doc/*/copyright",
                // Java's postinst links its man page into man1 through update-alternatives
                "--essential-hook=mkdir -p \"$1/usr/share/man/man1\"",
                "--customize-hook=chroot \"$1\" useradd --system --uid " + USER + " --gid 0 --home-dir " + base.home() + " --no-create-home "
                        + "--shell /usr/sbin/nologin jitzoo",
                "--customize-hook=mkdir -p \"$1" + base.home() + "\" && chown " + USER + ":0 \"$1" + base.home() + "\"",
                suiteName));
        List<String> mirrors = List.of("deb http://deb.debian.org/debian " + suiteName + " main",
                "deb http://deb.debian.org/debian " + suiteName + "-updates main",
                "deb http://deb.debian.org/debian-security " + suiteName + "-security main");
        LocalDate today = LocalDate.now(ZoneOffset.UTC);
        String week = today.get(IsoFields.WEEK_BASED_YEAR) + "-W"
                + today.get(IsoFields.WEEK_OF_WEEK_BASED_YEAR);
        Path tarball = dir.resolve("debian-" + suiteName + "-" + week + "-" + hash(String.join("\n", command) + "\n"
                + String.join("\n", mirrors)) + ".tar");
        if (Files.exists(tarball) && !newBase) {
            Suite.say("base: " + tarball + " (kept; --new-base assembles it again)");
            return tarball;
        }
        Files.createDirectories(dir);
        Path partial = dir.resolve(tarball.getFileName() + ".partial");
        command.add(partial.toString());
        command.addAll(mirrors);
        Suite.say("base: Debian " + suiteName + " with " + String.join(", ", base.packages()) + " from Debian's archive (mmdebstrap, a "
                + "minute or two)");
        suite.run("mmdebstrap", dir, command);
        Files.move(partial, tarball, StandardCopyOption.REPLACE_EXISTING);
        try (DirectoryStream<Path> older = Files.newDirectoryStream(dir, "debian-" + suiteName + "-*.tar")) {
            for (Path old : older) {
                if (!old.equals(tarball)) {
                    Files.delete(old); // a base of an earlier week or recipe: this one replaces it
                }
            }
        }
        return tarball;
    }

    /** The tag {@code base-SUITE} of the layout: one layer, the base root filesystem. */
    private void baseImage(Path layout, Base spec, Path base, Path bundle) {
        String image = layout + ":" + baseTag(spec);
        umoci("an empty image", "new", "--image", image);
        umoci("unpack", "unpack", "--image", image, bundle.toString());
        suite.run("the base's files", suite.root(), List.of("tar", "-xf", base.toString(), "-C", bundle.resolve("rootfs").toString()));
        umoci("the base layer", "repack", "--image", image, "--history.created_by=mmdebstrap --variant=minbase "
                + spec.suite() + " +" + String.join(",", spec.packages()), "--history.comment=" + spec.comment(), bundle.toString());
        Suite.remove(bundle);
    }

    private static String baseTag(Base base) {
        return "base-" + base.suite();
    }

    /** A service's image: the base, its dependencies, then the application; its config; the tarball. */
    private void serviceImage(Path layout, String service, String version, Path tarball) throws IOException {
        Path app = suite.path(MODULES.get(service)).resolve("target/quarkus-app");
        if (!Files.exists(app.resolve("quarkus-run.jar"))) {
            throw new Suite.StepFailed(app.resolve("quarkus-run.jar") + " is missing: build the suite first (./jitzoo builds it)");
        }
        String image = layout + ":" + service;
        umoci("tag", "tag", "--image", layout + ":" + baseTag(JAVA), service);
        Path staged = layout.resolveSibling(service);
        Files.createDirectories(staged.resolve("deployments"));
        suite.run("copy " + app, suite.root(), List.of("cp", "-r", app + "/.", staged.resolve("deployments").toString()));
        // the dependencies change seldom: a layer of their own, kept by a registry and a node between releases
        layer(image, staged, service + "'s dependencies", "quarkus-app/lib (dependencies)", List.of("deployments/lib"));
        layer(image, staged, service + "'s application", "quarkus-app (application)",
                List.of("deployments/app", "deployments/quarkus", "deployments/quarkus-run.jar"));
        config(image, service, version, "/deployments", List.of("java", "-jar", "/deployments/quarkus-run.jar"),
                "--config.exposedports=" + PORT + "/tcp", "--config.env=QUARKUS_HTTP_PORT=" + PORT);
        write(image, tarball, reference(service, version));
    }

    /**
     * The tune client's image: the Node.js base, the SDK's runtime dependencies, then the SDK (its
     * dist and package.json); {@code node dist/cli/tune.js} as its entrypoint, run as user 185.
     */
    private void tuneImage(Path layout, String version, Path tarball) throws IOException {
        new Prereqs(suite).sdk();
        Path sdk = suite.path("client-sdk-js");
        String image = layout + ":" + TUNE;
        umoci("tag", "tag", "--image", layout + ":" + baseTag(NODE), TUNE);
        Path staged = layout.resolveSibling(TUNE);
        Path app = staged.resolve("app");
        Files.createDirectories(app);
        for (String file : List.of("package.json", "package-lock.json")) {
            Files.copy(sdk.resolve(file), app.resolve(file), StandardCopyOption.REPLACE_EXISTING);
        }
        suite.run("the SDK's runtime dependencies", app, List.of("npm", "ci", "--omit=dev", "--ignore-scripts", "--no-audit", "--no-fund"));
        Files.delete(app.resolve("package-lock.json"));
        suite.run("copy the SDK", suite.root(), List.of("cp", "-r", sdk.resolve("dist").toString(), app.toString()));
        layer(image, staged, "tune's dependencies", "node_modules (dependencies)", List.of("app/node_modules"));
        layer(image, staged, "tune's application", "the SDK (dist)", List.of("app/dist", "app/package.json"));
        config(image, TUNE, version, "/app", List.of("node", "--experimental-wasm-relaxed-simd", "/app/dist/cli/tune.js"));
        write(image, tarball, reference(TUNE, version));
    }

    /**
     * An image's config, as every image has it: dated at the commit, run as {@value #USER} from
     * {@code workdir} with {@link #PATH} and UTF-8, stopped by SIGTERM, labelled with its name,
     * version and revision; then what is its own ({@code more}: ports, settings).
     */
    private void config(String image, String name, String version, String workdir, List<String> entrypoint, String... more) {
        List<String> args = new ArrayList<>(List.of("config", "--image", image, "--no-history", "--author=jitzoo",
                "--created=" + Instant.ofEpochSecond(commitTime()), "--config.user=" + USER, "--config.workingdir=" + workdir,
                "--config.env=PATH=" + PATH, "--config.env=LANG=C.UTF-8", "--config.stopsignal=SIGTERM",
                "--config.label=org.opencontainers.image.title=jitzoo-" + name,
                "--config.label=org.opencontainers.image.version=" + version,
                "--config.label=org.opencontainers.image.revision=" + revision()));
        entrypoint.forEach(part -> args.add("--config.entrypoint=" + part));
        args.addAll(List.of(more));
        umoci(name + "'s config", args.toArray(String[]::new));
    }

    /** The image as a docker-archive tarball named {@code reference}. */
    private void write(String image, Path tarball, String reference) throws IOException {
        Files.deleteIfExists(tarball);
        suite.run("skopeo copy", suite.root(), List.of("skopeo", "copy", "--quiet", "oci:" + image, "docker-archive:" + tarball + ":" + reference));
    }

    /**
     * Appends a layer of {@code paths} under {@code staged}, written by GNU tar as the same bytes for the
     * same files: sorted, owned by root, dated at the commit. It holds no entry for /deployments
     * itself, which the base gives to the user.
     */
    private void layer(String image, Path staged, String what, String comment, List<String> paths) {
        Path tar = staged.resolveSibling(staged.getFileName() + ".tar");
        List<String> command = new ArrayList<>(List.of("tar", "--sort=name", "--owner=0", "--group=0", "--numeric-owner",
                "--mode=a+rX,go-w", "--mtime=@" + commitTime(), "-cf", tar.toString(), "-C", staged.toString()));
        command.addAll(paths);
        suite.run(what, suite.root(), command);
        umoci(what, "raw", "add-layer", "--image", image, "--history.comment=" + comment, tar.toString());
    }

    /** The image's name as the chart pulls it: [REGISTRY/]jitzoo/SERVICE:TAG. */
    private String reference(String service, String version) {
        String name = "jitzoo/" + service + ":" + version;
        return registry.isBlank() ? name : registry.replaceAll("/+$", "") + "/" + name;
    }

    private void umoci(String what, String... args) {
        List<String> command = new ArrayList<>(List.of("umoci"));
        command.addAll(List.of(args));
        suite.run("umoci: " + what, suite.root(), command);
    }

    private String chartAppVersion() throws IOException {
        Path chart = suite.path("helm/jitzoo/Chart.yaml");
        Matcher m = Pattern.compile("(?m)^appVersion:\\s*\"?([^\"\\s]+)\"?").matcher(Files.readString(chart));
        if (!m.find()) {
            throw new IllegalStateException(chart + " has no appVersion");
        }
        return m.group(1);
    }

    private long commitTime() {
        try {
            return Long.parseLong(suite.output("git log", List.of("git", "-C", suite.root().toString(), "log", "-1", "--format=%ct")).strip());
        } catch (Suite.StepFailed | NumberFormatException e) {
            return 0;
        }
    }

    private String revision() {
        try {
            return suite.output("git rev-parse", List.of("git", "-C", suite.root().toString(), "rev-parse", "HEAD")).strip();
        } catch (Suite.StepFailed e) {
            return "unknown";
        }
    }

    private static String hash(String text) {
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(digest, 0, 6);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
