/**
 * Changing who an encrypted image is for ({@code beamsave rekey}): its header is written anew
 * with recipients added and removed, and the rest of the image is copied unchanged, on disk or
 * by the object store itself.
 */
package io.beamsave.pipelines.rekey;
