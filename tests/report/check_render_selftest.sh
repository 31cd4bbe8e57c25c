#!/usr/bin/env bash
# Negative controls for check_render.sh: it must pass the good fixture and fail
# each broken one on exactly the check that the breakage is about, so a check
# that silently stopped working (say, Chromium no longer printing the console)
# shows up here.
#
#   tests/report/check_render_selftest.sh CHROMIUM PNG_NONBLANK
#
# Exit 0 all as expected, 1 otherwise, 77 no Chromium (as check_render.sh).
set -uo pipefail   # no -e: run every case, then report

if [[ $# -ne 2 ]]; then
    echo "usage: $0 CHROMIUM PNG_NONBLANK" >&2
    exit 2
fi
chromium=$1 png_nonblank=$2
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
check=$here/check_render.sh
fixtures=$here/fixtures
work=$(mktemp -d "${TMPDIR:-/tmp}/check_render_selftest.XXXXXX") || exit 1

bad=0
# expect FIXTURE "DOM CONSOLE SCREENSHOT" FIG_ID...: each word ok or FAIL.
expect() {
    local name=$1 want out rc t0 got='' check_name line status expected_rc=0 words
    read -ra words <<<"$2"   # the table below aligns with extra spaces
    want=${words[*]}
    shift 2
    [[ $want == *FAIL* ]] && expected_rc=1
    t0=$(date +%s)
    out=$("$check" "$chromium" "$png_nonblank" "$fixtures/$name.html" "$work/$name" "$@")
    rc=$?
    if [[ $rc -eq 77 ]]; then
        echo "$out"
        echo "check_render_selftest: SKIP: no Chromium"
        rm -rf -- "$work"
        exit 77
    fi
    for check_name in dom console screenshot; do
        line=$(grep -E "^check_render: (ok|FAIL): $check_name: " <<<"$out" | head -n 1)
        status=${line#check_render: }
        status=${status%%:*}
        got+="${got:+ }${status:-missing}"
    done
    if [[ $got == "$want" && $rc -eq $expected_rc ]]; then
        echo "check_render_selftest: ok: $name: $got (exit $rc, $(($(date +%s) - t0))s)"
    else
        echo "check_render_selftest: FAIL: $name: want '$want' exit $expected_rc, got '$got' exit $rc"
        bad=1
    fi
    sed 's/^/    /' <<<"$out"
}

#      fixture           dom  console screenshot  figure ids
expect good             "ok   ok      ok"   fig-throughput fig-latency
expect console_error    "ok   FAIL    ok"   fig-throughput fig-latency
expect missing_resource "ok   FAIL    ok"   fig-throughput fig-latency
expect missing_chart    "FAIL ok      ok"   fig-throughput fig-latency fig-queue
expect blank            "ok   ok      FAIL" fig-blank

if [[ $bad -eq 0 ]]; then
    rm -rf -- "$work"
else
    echo "check_render_selftest: outputs kept in $work"
fi
exit "$bad"
