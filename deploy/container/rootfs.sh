#!/usr/bin/env bash
# Lays out the container image's files under DIR, for Jib to add to an empty (scratch) base: no
# base image is pulled, so the image builds with no registry and no Docker daemon.
#   /opt/java               a JRE jlinked from this JDK with only the modules beamsave needs
#   /lib, /lib64, /usr/lib  the shared libraries that JRE and the jar's natives link against
#                           (glibc, libz, libgcc_s, the name-service modules, the C.UTF-8 locale)
#   /opt/beamsave           the release's jar, its Flink runner (lib/flink-LINE/) and JVM flags
#   /etc/passwd, /etc/group the beamsave user (65532), which the image runs as
#   /tmp                    where zstd-jni, lz4 and jffi extract their natives at run time
# usage: deploy/container/rootfs.sh DIR JAR JVM_OPENS FLINK_RUNNER_DIR
set -euo pipefail
usage="usage: rootfs.sh DIR JAR JVM_OPENS FLINK_RUNNER_DIR"
dir=$(realpath -m "${1:?$usage}")
jar=$(realpath "${2:?$usage}")
opens=$(realpath "${3:?$usage}")
runner=$(realpath "${4:?$usage}")
jdk=${JAVA_HOME:-$(dirname "$(dirname "$(readlink -f "$(command -v javac)")")")}

# From `jdeps --ignore-missing-deps --multi-release 17 --print-module-deps beamsave.jar`, plus
# what is reached by reflection or service loading, which jdeps cannot see: the elliptic-curve
# and Kerberos-free TLS providers S3 over https needs, and the zip file system.
modules=java.base,java.compiler,java.datatransfer,java.desktop,java.instrument,java.logging,java.management,java.naming,java.net.http,java.scripting,java.security.jgss,java.sql,java.xml,jdk.crypto.ec,jdk.jfr,jdk.management,jdk.net,jdk.unsupported,jdk.zipfs,jdk.localedata

rm -rf "$dir"
mkdir -p "$dir/opt/beamsave/lib" "$dir/etc" "$dir/tmp"
"$jdk/bin/jlink" --add-modules "$modules" --output "$dir/opt/java" \
  --strip-debug --no-man-pages --no-header-files --compress=2 --include-locales=en
# The image is headless: the X11 parts of AWT (and the X libraries they link) are left out.
rm -f "$dir"/opt/java/lib/libawt_xawt.so "$dir"/opt/java/lib/libsplashscreen.so \
  "$dir"/opt/java/lib/libjawt.so
# The JDK's default class-data archive: a second off every start (jlink leaves it out).
"$dir/opt/java/bin/java" -Xshare:dump >/dev/null

cp "$jar" "$dir/opt/beamsave/lib/beamsave.jar"
cp "$opens" "$dir/opt/beamsave/lib/jvm-opens"
cp -r "$runner" "$dir/opt/beamsave/lib/$(basename "$runner")"

# The libraries, found the way the dynamic linker finds them here: for the JRE's own binaries
# and for the natives in the jar that load on x86_64 Linux.
natives=$(mktemp -d)
trap 'rm -rf "$natives"' EXIT
unzip -q -o "$jar" -d "$natives" 'linux/amd64/*.so' 'net/jpountz/util/linux/amd64/*.so' \
  'jni/x86_64-Linux/*.so'
libs=$( { find "$dir/opt/java" -type f \( -name '*.so' -o -path '*/bin/*' \); \
  find "$natives" -name '*.so'; } | xargs -r ldd 2>/dev/null \
  | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// && $1 !~ /:$/ { print $1 }' \
  | grep -v -e "^$dir/" -e "^$natives/" -e '/opt/java/' | sort -u)
# glibc loads these by name, not by link: users and hosts from files, then DNS.
# awk reads to the end: stopping early (exit) let ldconfig die of SIGPIPE, failing the build.
for extra in libnss_files.so.2 libnss_dns.so.2 libresolv.so.2; do
  libs+=$'\n'$(ldconfig -p | awk -v n="$extra" '$1 == n && /x86-64/ && !seen { print $NF; seen = 1 }')
done
for lib in $libs; do
  [ -n "$lib" ] || continue
  mkdir -p "$dir$(dirname "$lib")"
  cp -L "$lib" "$dir$lib"
done
# File names are UTF-8 bytes; glibc's C.UTF-8 locale is a file, not built in.
mkdir -p "$dir/usr/lib/locale"
cp -r /usr/lib/locale/C.utf8 "$dir/usr/lib/locale/"

cat >"$dir/etc/passwd" <<'EOF'
root:x:0:0:root:/root:/sbin/nologin
beamsave:x:65532:65532:beamsave:/tmp:/sbin/nologin
EOF
cat >"$dir/etc/group" <<'EOF'
root:x:0:
beamsave:x:65532:
EOF
echo 'hosts: files dns' >"$dir/etc/nsswitch.conf"
echo "rootfs: $(du -sh "$dir" | cut -f1) in $dir"
