// The images `./jitzoo images` writes, as the tests find them.
import fs from 'node:fs';
import path from 'node:path';

/** The newest tarball of an image in `dir` (jitzoo-NAME-TAG.tar; a folder may also hold those of earlier tags), or undefined. */
export function newestTarball(dir, name) {
  return fs.readdirSync(dir).filter((f) => f.startsWith(`jitzoo-${name}-`) && f.endsWith('.tar'))
    .map((f) => path.join(dir, f)).sort((a, b) => fs.statSync(b).mtimeMs - fs.statSync(a).mtimeMs)[0];
}
