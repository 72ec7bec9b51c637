/**
 * The walk of a library, plain Java: its entries in path order through directory handles
 * ({@link io.beamsave.transforms.walk.LibraryWalker}), as the catalog will hold them ({@link
 * io.beamsave.transforms.walk.WalkedEntry}), hard links met again ({@link
 * io.beamsave.transforms.walk.HardLinks}), cache directories ({@link
 * io.beamsave.transforms.walk.CacheDirTag}), and what it found ({@link
 * io.beamsave.transforms.walk.Listing}) and could not read ({@link
 * io.beamsave.transforms.walk.Unreadable}). The save's transforms run it and stage what it finds.
 */
package io.beamsave.transforms.walk;
