#!/usr/bin/env bash
# chromium.sh DIR prints the path of a Chromium for mermaid-cli. It uses a chromium or
# chromium-browser on PATH; otherwise it unpacks Debian's chromium package, and those of its
# dependencies this machine lacks, into DIR with apt-get download and dpkg-deb -x (no root, no
# apt-get install: only the Debian mirror the machine's apt is configured for) and prints a wrapper
# that runs it with DIR's libraries.
set -euo pipefail
dir=$1
for c in chromium chromium-browser; do
	if p=$(command -v "$c"); then echo "$p"; exit 0; fi
done
if [ -x "$dir/chromium" ]; then echo "$dir/chromium"; exit 0; fi
command -v apt-get >/dev/null || { echo "chromium.sh: no chromium on PATH and no apt-get to fetch Debian's" >&2; exit 1; }
tmp=$(mktemp -d)
chmod 755 "$tmp" # apt-get download drops to user _apt
trap 'rm -rf "$tmp"' EXIT
# The packages apt would install: chromium and the dependencies missing here.
pkgs=$(apt-get -s install --no-install-recommends chromium 2>/dev/null | awk '/^Inst /{print $2}')
[ -n "$pkgs" ] || { echo "chromium.sh: apt-get finds no chromium package (run apt-get update?)" >&2; exit 1; }
echo "chromium.sh: unpacking $(echo "$pkgs" | wc -w) Debian packages into $dir" >&2
(cd "$tmp" && apt-get download $pkgs >/dev/null)
mkdir -p "$dir/root"
for f in "$tmp"/*.deb; do dpkg-deb -x "$f" "$dir/root"; done
cat > "$dir/chromium" <<WRAP
#!/bin/sh
# Debian's chromium unpacked by hack/mermaid/chromium.sh, with its libraries.
export LD_LIBRARY_PATH="$dir/root/usr/lib/x86_64-linux-gnu:$dir/root/usr/lib/x86_64-linux-gnu/pulseaudio\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}"
exec "$dir/root/usr/lib/chromium/chromium" "\$@"
WRAP
chmod +x "$dir/chromium"
echo "$dir/chromium"
