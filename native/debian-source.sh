# Sourced by native/*/build.sh: `debian_source <pool path> <sha256> <dir>` downloads a source tarball
# (gzip or xz) from Debian's archive, refuses it unless its SHA-256 is the one given, and unpacks it
# into <dir>.
debian_source() {
  curl -sSf -o "$3/src.tar" "http://deb.debian.org/debian/pool/main/$1"
  echo "$2  $3/src.tar" | sha256sum -c - >/dev/null
  tar xf "$3/src.tar" -C "$3"
}
