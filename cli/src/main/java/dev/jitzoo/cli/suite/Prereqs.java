package dev.jitzoo.cli.suite;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

/**
 * What a command needs besides Java, installed on first use: Node and the npm packages of the
 * harness and the SDK (rebuilt when their sources change), Chromium's SwiftShader for WebGPU,
 * Python with onnx for the test models. System packages come from apt-get when running as root;
 * otherwise the error names the package.
 */
public final class Prereqs {

    /** Vulkan on the CPU: the SwiftShader device Debian's Chromium ships, which Dawn runs WebGPU on. */
    private static final Path SWIFTSHADER_ICD = Path.of("/usr/lib/chromium/vk_swiftshader_icd.json");

    /** Debian's multiarch folder name of this machine's libraries. */
    static final String MULTIARCH = "aarch64".equals(System.getProperty("os.arch")) ? "aarch64-linux-gnu" : "x86_64-linux-gnu";

    private final Suite suite;

    public Prereqs(Suite suite) {
        this.suite = suite;
    }

    public void apt(String... packages) {
        String list = String.join(" ", packages);
        if (!"root".equals(System.getProperty("user.name"))) {
            throw new Suite.StepFailed("missing " + list + "; install it: sudo apt-get install -y " + list);
        }
        Suite.say("installing " + list + " (apt-get)");
        suite.run("apt-get update", suite.root(), List.of("apt-get", "update", "-qq"));
        List<String> install = new ArrayList<>(List.of("apt-get", "install", "-y", "-qq", "--no-install-recommends"));
        install.addAll(List.of(packages));
        suite.run("apt-get install " + list, suite.root(), Map.of("DEBIAN_FRONTEND", "noninteractive"), install);
    }

    public void node() {
        if (!onPath("node")) {
            apt("nodejs", "npm");
        }
    }

    /**
     * The harness's npm packages (onnxruntime-web, TF.js, Dawn), installed when the lock file
     * changed, and the SDK built: the harness checks kernels against the SDK's reference.
     */
    public void harness() {
        sdk();
        npmCi(suite.path("harness"), "the harness's npm dependencies (onnxruntime-web, TF.js, Dawn)");
    }

    /** The chart tests' npm packages (Helm, the Kubernetes API models), installed when the lock file changed. */
    public void chartTests() {
        node();
        npmCi(suite.path("helm"), "the chart tests' npm dependencies (Helm, the Kubernetes API models)");
    }

    private void npmCi(Path dir, String what) {
        Path installed = dir.resolve("node_modules/.package-lock.json");
        if (!Files.exists(installed) || newer(dir.resolve("package-lock.json"), modified(installed))) {
            Suite.say("installing " + what);
            suite.run("npm ci in " + suite.root().relativize(dir) + "/", dir, List.of("npm", "ci", "--no-audit", "--no-fund"));
        }
    }

    /**
     * The SDK, its npm packages installed and its build (the package, then its tools, the last
     * step) newer than its sources, its tools' sources, the protos and the compiler (which writes
     * the SDK's generic kernels).
     */
    public void sdk() {
        node();
        Path dir = suite.path("client-sdk-js");
        Path installed = dir.resolve("node_modules/.package-lock.json");
        if (!Files.exists(installed) || newer(dir.resolve("package-lock.json"), modified(installed))) {
            Suite.say("installing the SDK's npm dependencies");
            suite.run("npm install in client-sdk-js/", dir, List.of("npm", "install", "--no-audit", "--no-fund"));
        }
        Path built = dir.resolve("tools/dist/site.js");
        if (!Files.exists(built) || newer(dir.resolve("src"), modified(built)) || newer(dir.resolve("tools/src"), modified(built))
                || newer(suite.path("proto/src"), modified(built)) || newer(suite.path("compiler/src/main"), modified(built))) {
            Suite.say("building the SDK");
            suite.run("the SDK's build", dir, List.of("npm", "run", "-s", "build"));
        }
    }

    /** The environment that points Dawn at SwiftShader, installing Chromium and the Vulkan loader if missing. */
    public Map<String, String> webgpu() {
        if (!Files.exists(SWIFTSHADER_ICD) || !vulkanLoader(Path.of("/"))) {
            apt("chromium", "libvulkan1");
        }
        String icd = System.getenv("VK_ICD_FILENAMES");
        return Map.of("VK_ICD_FILENAMES", icd != null && !icd.isBlank() ? icd : SWIFTSHADER_ICD.toString());
    }

    /**
     * Whether the system's Vulkan loader (Debian's libvulkan1) is under {@code root}: where Dawn's
     * dlopen finds it. Chromium's own copy in /usr/lib/chromium is not on that path.
     */
    static boolean vulkanLoader(Path root) {
        return Stream.of("usr/lib/" + MULTIARCH, "lib/" + MULTIARCH, "usr/lib")
                .anyMatch(dir -> Files.exists(root.resolve(dir).resolve("libvulkan.so.1")));
    }

    /**
     * The browser engines beside Chromium, installed if missing: Firefox (SpiderMonkey, driven over
     * WebDriver BiDi), WebKitGTK's WebDriver and MiniBrowser (JavaScriptCore), and a virtual X
     * display for MiniBrowser. Returns the engines the browser tests must run in.
     */
    public Map<String, String> engines() {
        List<String> missing = new ArrayList<>();
        if (!Files.exists(Path.of("/usr/bin/firefox-esr"))) {
            missing.add("firefox-esr");
        }
        if (!Files.exists(Path.of("/usr/bin/WebKitWebDriver"))) {
            missing.add("webkit2gtk-driver");
        }
        if (!Files.exists(Path.of("/usr/bin/Xvfb"))) {
            missing.add("xvfb");
        }
        if (!missing.isEmpty()) {
            apt(missing.toArray(String[]::new));
        }
        return Map.of("JITZOO_ENGINES", "chromium,firefox,webkit");
    }

    public static boolean onPath(String program) {
        String path = System.getenv().getOrDefault("PATH", "");
        for (String dir : path.split(java.io.File.pathSeparator)) {
            if (!dir.isEmpty() && Files.isExecutable(Path.of(dir, program))) {
                return true;
            }
        }
        return false;
    }

    /** Whether a file, or any file under a folder, was changed after {@code time}. */
    static boolean newer(Path path, FileTime time) {
        try (Stream<Path> files = Files.walk(path)) {
            return files.filter(Files::isRegularFile).anyMatch(f -> modified(f).compareTo(time) > 0);
        } catch (IOException e) {
            return true;
        }
    }

    static FileTime modified(Path file) {
        try {
            return Files.getLastModifiedTime(file);
        } catch (IOException e) {
            return FileTime.fromMillis(0);
        }
    }
}
