#!/bin/sh
# Writes a `go build -overlay` file that gives a binary kubesim's scaled clock
# (patches/go/README.md): it copies the Go runtime files the diffs touch from
# this toolchain's GOROOT, applies patches/go/<go version>/*.diff to the copies,
# and writes OUTDIR/go, a go command that builds with them; it prints its path.
# (.diff, not .patch: the Makefile applies every *.patch under patches/ to
# upstream modules.)
#
#   "$(patches/go/overlay.sh build/goclock)" build -o bin/x ./cmd/x
#
# go refuses to overlay files beneath GOMODCACHE, where GOTOOLCHAIN puts the
# toolchain it downloads; so OUTDIR/goroot is a copy of GOROOT made of hard
# links (no disk space, nothing in it changed), and OUTDIR/go is its go
# command with -overlay OUTDIR/overlay.json and that GOROOT (whatever GOROOT
# the caller has: go test sets one for the tests it runs).
#
# It refuses a toolchain or platform the patches were not written for, rather
# than build a binary with a wrong clock.
set -eu
out=${1:?usage: overlay.sh OUTDIR}
here=$(cd "$(dirname "$0")" && pwd)
go=${GO:-go}
version=$("$go" env GOVERSION)
goos=$("$go" env GOOS)
goarch=$("$go" env GOARCH)
goroot=$("$go" env GOROOT)
if [ ! -d "$here/$version" ]; then
	echo "patches/go: no scaled-clock patches for $version (written for: $(cd "$here" && ls -d go1.* | paste -sd " ")); set GOTOOLCHAIN to one of them" >&2
	exit 1
fi
if [ "$goos/$goarch" != linux/amd64 ]; then
	echo "patches/go: the scaled clock is written for linux/amd64, not $goos/$goarch" >&2
	exit 1
fi
rm -rf "$out"
mkdir -p "$out/src"
out=$(cd "$out" && pwd)
cp -al "$goroot" "$out/goroot" 2>/dev/null || cp -a "$goroot" "$out/goroot"
# Writable directories (not files: those are the toolchain's own inodes), so
# that the copy can be removed like any build directory.
find "$out/goroot" -type d -exec chmod u+w {} +
# The files the diffs touch; a new file (vclock.go) has no original to copy.
files=$(sed -n 's#^+++ b/##p' "$here/$version"/*.diff | sort -u)
for f in $files; do
	mkdir -p "$out/$(dirname "$f")"
	if [ -f "$goroot/$f" ]; then
		cp "$goroot/$f" "$out/$f"
		chmod u+w "$out/$f"
	fi
done
for p in "$here/$version"/*.diff; do
	if ! patch -s -p1 -d "$out" --no-backup-if-mismatch <"$p" >"$out/patch.log" 2>&1; then
		echo "patches/go: $(basename "$p") does not apply to $goroot (a modified GOROOT?): $(head -1 "$out/patch.log")" >&2
		exit 1
	fi
done
rm -f "$out/patch.log"
# A module of its own, so that a `go vet ./...` of a module OUTDIR lies in
# (build/goclock in kubesim's) does not take the runtime's copy for its own.
echo "module goclock" >"$out/go.mod"
{
	printf '{"Replace":{'
	sep=
	for f in $files; do
		printf '%s"%s":"%s"' "$sep" "$out/goroot/$f" "$out/$f"
		sep=,
	done
	printf '}}\n'
} >"$out/overlay.json"
cat >"$out/go" <<GO
#!/bin/sh
# $version with kubesim's scaled clock (patches/go/overlay.sh wrote this).
GOROOT="$out/goroot" GOTOOLCHAIN=local GOFLAGS="\$GOFLAGS -overlay=$out/overlay.json" exec "$out/goroot/bin/go" "\$@"
GO
chmod +x "$out/go"
echo "$out/go"
