#!/usr/bin/env bash
# The bundled comparison's report (tools/bootstrap.sh run, with a smaller bootstrap)
# renders in headless Chromium: every chart of the page is there with its SVG, no
# console error or external load, a screenshot that is not blank.
#
#   tests/report/compare_report_renders.sh GCSIM CHROMIUM PNG_NONBLANK OUTDIR
#
# OUTDIR keeps the compare directory (OUTDIR/compare/report.html) and the screenshot
# (OUTDIR/render/report.png). Exit 77 where Chromium is missing.
set -euo pipefail
gcsim=$1 chromium=$2 png_nonblank=$3 outdir=$4
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
rm -rf "$outdir"
mkdir -p "$outdir"
"$gcsim" compare --cluster "$root/configs/dgx-a100-pod.yaml" --trace "$root/traces/philly-d07-d21.csv" \
  --start 2017-09-25T05:25:35 --policy easy --runtime-model step \
  --profiles "$root/configs/profiles/input-bound.yaml" \
  --variant numa-bound:binding=numa-bound --variant unbound:binding=unbound \
  --variant k8s-none:binding=k8s-none --bootstrap 200 --no-progress --out "$outdir/compare"
report=$outdir/compare/report.html
charts=(fig-wait-cdf fig-slowdown-cdf fig-inflation-hist fig-queue fig-gpu-util fig-wait-by-gpus fig-wait-by-partition)
# Every chart the page has is one of those asked for below: none goes unchecked.
have=$(grep -c '<figure class="chart"' "$report")
if [[ $have -ne ${#charts[@]} ]]; then
  echo "compare_report_renders: FAIL: the report has $have charts, the check knows ${#charts[@]}" >&2
  exit 1
fi
if grep -q '<script' "$report"; then
  echo "compare_report_renders: FAIL: the report has a <script>; it must read without JavaScript" >&2
  exit 1
fi
exec "$here/check_render.sh" "$chromium" "$png_nonblank" "$report" "$outdir/render" "${charts[@]}"
