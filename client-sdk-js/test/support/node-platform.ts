// The tests import the SDK's sources directly, not through the package's Node entry: install what
// that entry installs (ws, the core count, the engine) before each test file.
import "../../src/node-platform.js";
