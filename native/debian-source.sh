# Sourced by native/*/build.sh: `debian_source <pool path> <sha256> <dir>` downloads a source tarball
# from Debian's archive, refuses it unless its SHA-256 is the one given, and unpacks it into <dir>.
debian_source() {
  curl -sSf -o "$3/src.tar.gz" "http://deb.debian.org/debian/pool/main/$1"
  echo "$2  $3/src.tar.gz" | sha256sum -c - >/dev/null
  tar xzf "$3/src.tar.gz" -C "$3"
}
