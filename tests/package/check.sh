#!/usr/bin/env bash
# The packages a user installs without compiling (scripts/package):
# - the .tar.gz, unpacked into an empty directory, trains the Fashion-MNIST
#   recipe for one epoch from there, with nothing on PATH but the package's
#   bin/ (no compiler, no cmake, no Python), to the accuracy one epoch reaches;
# - the .deb declares its Debian dependencies and installs under /usr: its
#   files, unpacked into a scratch root, run a short training too.
#   check.sh <source dir> <build dir> <scratch dir>
set -euo pipefail
source_dir=$1 build=$2 scratch=$3
rm -rf "$scratch" && mkdir -p "$scratch"
fail() { echo "FAIL: $*" >&2; exit 1; }

packages=$("$source_dir/scripts/package" --build "$build" --out "$scratch/packages" 2>"$scratch/package.log") ||
  { cat "$scratch/package.log" >&2; fail "scripts/package failed"; }
tarball=$(grep '\.tar\.gz$' <<<"$packages") || fail "no .tar.gz among: $packages"
deb=$(grep '\.deb$' <<<"$packages") || fail "no .deb among: $packages"
echo "packages: $(basename "$tarball") $(du -m "$tarball" | cut -f1) MB, $(basename "$deb") $(du -m "$deb" | cut -f1) MB"

# A bare environment: the package's own bin/ on PATH and nothing else.
bare() { local bin=$1; shift; env -i HOME="$scratch/home" PATH="$bin" LANG=C.UTF-8 "$@"; }
mkdir -p "$scratch/home" "$scratch/opt"

tar -xzf "$tarball" -C "$scratch/opt"
prefix=$scratch/opt/$(basename "$tarball" .tar.gz)
[ -x "$prefix/bin/orchestrate" ] || fail "the tarball has no $(basename "$prefix")/bin/orchestrate"
(cd "$scratch" && bare "$prefix/bin" orchestrate run fashion_mnist --set run.epochs=1 --db "$scratch/tgz.db" \
   --quiet --format json >"$scratch/tgz.json" 2>"$scratch/tgz.err") ||
  { cat "$scratch/tgz.err" >&2; fail "training from the unpacked tarball failed"; }
python3 - "$scratch/tgz.json" "$prefix" "$scratch/tgz.db" <<'PY'
import json, sqlite3, sys
outcome = json.load(open(sys.argv[1]))
assert outcome["status"] == "finished", outcome
top1 = outcome["final_metrics"]["eval/top1"]
assert top1 >= 0.80, f"one epoch reached top-1 {top1}, expected at least 0.80"
# The run store records the plugins the run loaded: the package's own.
libraries = [row[0] for row in sqlite3.connect(sys.argv[3]).execute("select library_path from run_plugins")]
assert libraries and all(path.startswith(sys.argv[2] + "/lib/orchestrate/plugins/") for path in libraries), libraries
print(f"tar.gz: trained one epoch from {sys.argv[2].rsplit('/', 1)[-1]}/, top-1 {top1:.4f}, {len(libraries)} plugins from the package")
PY

depends=$(dpkg-deb --field "$deb" Depends)
for library in libsqlite3 libprotobuf-lite zlib1g libstdc++6; do
  grep -q "$library" <<<"$depends" || fail "the .deb's Depends lacks $library: $depends"
done
contents=$(dpkg-deb --contents "$deb")  # whole, not piped into grep -q (pipefail: its early exit)
grep -q ' \./usr/bin/orchestrate$' <<<"$contents" || fail "the .deb has no /usr/bin/orchestrate"
dpkg-deb --extract "$deb" "$scratch/deb_root"
(cd "$scratch" && bare "$scratch/deb_root/usr/bin" orchestrate run fashion_mnist --set run.max_steps=20 \
   --set eval.enabled=false --db "$scratch/deb.db" --quiet >"$scratch/deb.out" 2>&1) ||
  { cat "$scratch/deb.out" >&2; fail "training from the .deb's files failed"; }
grep -q "finished after 20 steps" "$scratch/deb.out" || fail "$(cat "$scratch/deb.out")"
echo "deb: Depends: $depends"
echo "deb: trained 20 steps from its files under a scratch /usr"
