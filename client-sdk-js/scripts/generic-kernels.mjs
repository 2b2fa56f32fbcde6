// Writes src/gen/generic-kernels.ts: the SDK's generic kernels (shapes given at call time), which
// the compiler generates (dev.jitzoo.compiler.kernel.GenericKernels). Needs the compiler built:
// `./jitzoo` builds it first; alone, `./mvnw -B -q install -pl compiler -am -DskipTests`.
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const sdk = join(dirname(fileURLToPath(import.meta.url)), "..");
const classes = join(sdk, "..", "compiler", "target", "classes");
if (!existsSync(join(classes, "dev", "jitzoo", "compiler", "kernel", "GenericKernels.class"))) {
  console.error(`the SDK's generic kernels come from the compiler, which is not built (${classes} has no GenericKernels):\n`
    + "  run ./jitzoo (it builds the suite first), or ./mvnw -B -q install -pl compiler -am -DskipTests at the repository's root");
  process.exit(1);
}
execFileSync("java", ["-cp", classes, "dev.jitzoo.compiler.kernel.GenericKernels", join(sdk, "src", "gen", "generic-kernels.ts")], { stdio: "inherit" });
