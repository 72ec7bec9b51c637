/**
 * Everything beamsave's pipelines are built from, with no command line: the image format and
 * its encryption, codecs, the file system as the kernel sees it, stores and sinks, and the Beam
 * transforms of each path (save, read, consolidate). The module is named for the last of these,
 * which the rest exist to serve; its packages say what each part is (docs/architecture.md,
 * "Packages by concern").
 */
package io.beamsave.transforms;
