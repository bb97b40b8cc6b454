#!/usr/bin/env bash
# Rebuild the explorer's vendored JavaScript (graphdb/explorer/static/vendor/) from the npm
# registry, at the versions package-lock.json pins. Needs node and npm here only: the built,
# minified files are committed, so neither an install nor a run of graphdb needs Node.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="$here/../../graphdb/explorer/static/vendor"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cp "$here/package.json" "$here/package-lock.json" "$here"/*.entry.js "$work/"
cd "$work"
npm ci --no-audit --no-fund --ignore-scripts
esbuild="$(ls node_modules/@esbuild/*/bin/esbuild | head -1)"
mkdir -p "$out"
"$esbuild" cytoscape.entry.js --bundle --minify --format=iife --target=es2020 \
    --legal-comments=none --outfile="$out/cytoscape.min.js"
"$esbuild" codemirror.entry.js --bundle --minify --format=iife --global-name=CM \
    --target=es2020 --legal-comments=none --outfile="$out/codemirror.min.js"
# Every bundled package's licence, with its name and version.
{
  echo "Third-party software bundled in cytoscape.min.js and codemirror.min.js"
  echo "(built by tools/explorer_vendor/build.sh from the npm registry)."
  for pkg in $(node -e '
      const lock = require("./package-lock.json");
      for (const [path, p] of Object.entries(lock.packages))
        if (path && !p.dev) console.log(path.replace(/^node_modules\//, ""));'); do
    dir="node_modules/$pkg"
    version=$(node -p "require('./$dir/package.json').version")
    license=$(node -p "require('./$dir/package.json').license || ''")
    echo
    echo "================================================================================"
    echo "$pkg $version ($license)"
    echo "================================================================================"
    file=$(ls "$dir" | grep -i -m1 -E '^(licen[cs]e|copying)' || true)
    if [ -n "$file" ]; then cat "$dir/$file"; else echo "(licence: $license; no licence file in the package)"; fi
  done
} > "$out/THIRD_PARTY_LICENSES.txt"
ls -l "$out"
