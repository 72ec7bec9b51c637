/**
 * The filesystem as the kernel sees it: names as bytes, nanosecond times over the whole 64-bit
 * range, and every operation relative to an open directory handle without following a symbolic
 * link, through Linux system calls made with jnr-ffi. Java's file API decodes names with the
 * platform charset (a name that is not valid UTF-8 cannot be opened by the name it lists),
 * reads times through {@code FileTime} (clamped past 2262, wrong before 1970 with a fraction)
 * and resolves every path from the root (a directory swapped for a symlink mid-restore sends
 * the write elsewhere). No Beam imports; docs/filesystem.md says why this layer exists.
 */
package io.beamsave.transforms.fs;
