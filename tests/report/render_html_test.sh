#!/usr/bin/env bash
# Renders the HTML report in headless Chromium: the page must load, lay out all four figures
# (the page's own load handler counts figures with a non-empty box into data-figures-rendered),
# and give a non-blank screenshot. PNG figures from rsvg-convert are checked too.
# Usage: render_html_test.sh RENDER_TOOL WORK_DIR
set -euo pipefail
tool=$1
work=$2
rm -rf "$work" && mkdir -p "$work"
"$tool" "$work/report" > "$work/tool.log"

browser=$(command -v chromium || command -v chromium-browser || true)
[ -n "$browser" ] || { echo "FAIL: chromium not installed (Debian package chromium; scripts/setup.sh installs it)"; exit 1; }
flags=(--headless --no-sandbox --disable-gpu --disable-background-networking --disable-component-update
       --disable-sync --no-first-run --user-data-dir="$work/profile")
url="file://$(cd "$work/report" && pwd)/index.html"

timeout 90 "$browser" "${flags[@]}" --virtual-time-budget=5000 --dump-dom "$url" > "$work/dom.html" 2> "$work/chromium.log"
rendered=$(grep -o 'data-figures-rendered="[0-9]*"' "$work/dom.html" | grep -o '[0-9]\+' || true)
[ "$rendered" = 4 ] || { echo "FAIL: $rendered of 4 figures rendered"; tail -5 "$work/chromium.log"; exit 1; }
for fig in scatter histogram stages tokens; do
  grep -q "id=\"fig-$fig\"" "$work/dom.html" || { echo "FAIL: figure $fig missing from the page"; exit 1; }
  png="$work/report/figures/$fig.png"
  [ -s "$png" ] && [ "$(head -c 8 "$png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] ||
    { echo "FAIL: $png is not a PNG"; exit 1; }
done

timeout 90 "$browser" "${flags[@]}" --window-size=1280,4000 --screenshot="$work/screenshot.png" "$url" \
  > /dev/null 2>> "$work/chromium.log"
size=$(stat -c %s "$work/screenshot.png" 2>/dev/null || echo 0)
# A blank 1280x4000 page compresses to a few KB; the figures and tables make it far larger.
[ "$size" -gt 50000 ] || { echo "FAIL: screenshot missing or blank ($size bytes)"; exit 1; }
echo "1 passed, 0 failed: 4 figures rendered, screenshot $size bytes ($work/screenshot.png)"
