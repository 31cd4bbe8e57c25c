#!/usr/bin/env bash
# Checks that a self-contained `gcsim compare` report renders in headless Chromium.
#
#   tests/report/check_render.sh CHROMIUM_OR_EMPTY PNG_NONBLANK REPORT.html OUTDIR FIG_ID...
#
#   dom         --dump-dom has each FIG_ID on a <figure> that holds an inline <svg>
#   console     the page prints no console message or uncaught exception, and
#               loads nothing that is not inline (see "console" below)
#   screenshot  --screenshot of the page is not blank (PNG_NONBLANK decides)
#
# One "check_render: ok: CHECK: ..." or "check_render: FAIL: CHECK: ..." line per
# check. Exit 0 all passed, 1 any failed, 2 bad usage, 77 no Chromium (the first
# argument empty or not executable, and no `chromium` on PATH).
# OUTDIR keeps dom.html, console.log, report.png and each run's stderr.
# CHROMIUM_TIMEOUT (seconds, default 60) bounds each Chromium run.
set -uo pipefail   # no -e: every check runs and reports even after one fails

CHROMIUM_TIMEOUT=${CHROMIUM_TIMEOUT:-60}

if [[ $# -lt 5 ]]; then
    echo "usage: $0 CHROMIUM_OR_EMPTY PNG_NONBLANK REPORT.html OUTDIR FIG_ID..." >&2
    exit 2
fi
chromium_arg=$1 png_nonblank=$2 report=$3 outdir=$4
shift 4
fig_ids=("$@")
for id in "${fig_ids[@]}"; do
    # Restricting ids keeps them safe to search for literally in the DOM.
    if [[ ! $id =~ ^[A-Za-z0-9_-]+$ ]]; then
        echo "check_render: bad FIG_ID '$id' (letters, digits, '-', '_' only)" >&2
        exit 2
    fi
done

chromium=$chromium_arg
if [[ -z $chromium || ! -x $chromium ]]; then
    chromium=$(command -v chromium || true)
fi
if [[ -z $chromium ]]; then
    echo "check_render: SKIP: no Chromium ('$chromium_arg' not executable, none on PATH)"
    exit 77
fi

if [[ ! -f $report || ! -r $report ]]; then
    echo "check_render: FAIL: report: $report is not a readable file"
    exit 1
fi
report=$(readlink -f -- "$report")
mkdir -p -- "$outdir" || exit 2
outdir=$(readlink -f -- "$outdir")
# A fresh profile so no state leaks between runs; no stale outputs to be mistaken
# for this run's.
rm -rf -- "$outdir/profile" "$outdir/dom.html" "$outdir/console.log" "$outdir/report.png" \
          "$outdir/console_probe.html"

# file:// URL with the bytes outside a safe set percent-encoded.
file_url() {
    local LC_ALL=C p=$1 out='' c i
    for ((i = 0; i < ${#p}; i++)); do
        c=${p:i:1}
        case $c in
            [A-Za-z0-9/._~-]) out+=$c ;;
            *) printf -v c '%%%02X' "'$c"; out+=$c ;;
        esac
    done
    printf 'file://%s' "$out"
}

# Offline and quiet: no first-run UI, extensions, sync or background fetches;
# every host name fails to resolve and everything else goes to a dead local proxy,
# so a stray http(s) reference fails at once instead of waiting on the network.
# --enable-logging=stderr is what makes Chromium print the page's console.
flags=(
    --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size=1280,4000
    "--user-data-dir=$outdir/profile" --no-first-run --no-default-browser-check
    --disable-extensions --disable-default-apps --disable-sync
    --disable-background-networking --disable-component-update --no-pings
    --disable-domain-reliability --disable-client-side-phishing-detection
    --disable-breakpad "--host-resolver-rules=MAP * ~NOTFOUND"
    --proxy-server=127.0.0.1:9 "--proxy-bypass-list=<-loopback>"
    --enable-logging=stderr
)

# run_chromium STDOUT STDERR ARGS...: sets chromium_rc and took ("1.2s").
run_chromium() {
    local out=$1 err=$2 t0 ms
    shift 2
    t0=$(date +%s%N)
    timeout -k 5 "$CHROMIUM_TIMEOUT" "$chromium" "${flags[@]}" "$@" >"$out" 2>"$err"
    chromium_rc=$?
    ms=$((($(date +%s%N) - t0) / 1000000))
    took=$(printf '%d.%01ds' $((ms / 1000)) $((ms % 1000 / 100)))
    if [[ $chromium_rc -eq 124 || $chromium_rc -eq 137 ]]; then
        took="$took, timed out after ${CHROMIUM_TIMEOUT}s"
    fi
}

failed=0
ok()   { echo "check_render: ok: $*"; }
fail() { echo "check_render: FAIL: $*"; failed=1; }

url=$(file_url "$report")

# --- dom: each figure is in the DOM Chromium built and holds an <svg>.
# Chromium serialises attributes as name="value" after a single space, so a
# literal search is reliable; the figure's extent is up to the next </figure>.
dom=$outdir/dom.html
run_chromium "$dom" "$outdir/dom.stderr" --dump-dom "$url"
if [[ $chromium_rc -ne 0 ]]; then
    fail "dom: chromium --dump-dom exited $chromium_rc ($took); see $outdir/dom.stderr"
elif [[ ! -s $dom ]]; then
    fail "dom: chromium --dump-dom printed nothing ($took)"
else
    problems=$(awk -v RS='\001' -v ids="${fig_ids[*]}" '
        { doc = doc (NR > 1 ? RS : "") $0 }   # the whole file as one string
        END {
            n = split(ids, want, " ")
            for (k = 1; k <= n; k++) {
                id = want[k]
                p = index(doc, " id=\"" id "\"")
                if (p == 0) { out = out sep id " not found"; sep = "; "; continue }
                for (s = p; s > 1 && substr(doc, s, 1) != "<"; s--) ;
                if (substr(doc, s, 8) != "<figure ") {
                    out = out sep id " is not on a <figure>"; sep = "; "; continue
                }
                rest = substr(doc, p)
                e = index(rest, "</figure>")
                if (e == 0 || index(substr(rest, 1, e), "<svg") == 0) {
                    out = out sep id " has no <svg>"; sep = "; "
                }
            }
            print out
        }' "$dom")
    if [[ -n $problems ]]; then
        fail "dom: $problems ($took)"
    else
        ok "dom: ${fig_ids[*]} present, each with an inline <svg> ($took)"
    fi
fi

# --- console: Chromium 156 prints a page's console messages only with
# --enable-logging=stderr, as
#   [pid:tid:MMDD/hhmmss.us:INFO:CONSOLE:LINE] "MESSAGE", source: URL (LINE)
# always at INFO, whatever the level (console.log and console.error look alike),
# so any such line fails: a normal report has no script. Uncaught exceptions
# come out the same way ("Uncaught Error: ..."). A failed subresource load is NOT
# printed at all, so the page is loaded from a copy with a Content-Security-Policy
# that allows only inline scripts/styles and data: images/fonts/media; every
# other load (missing or not) is then blocked and printed as a console message.
# A canary console.log in the copy proves the logging still works.
canary=check_render-console-canary
inject="<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:; font-src data:; media-src data:\"><script>console.log(\"$canary\")</script>"
probe=$outdir/console_probe.html
# Insert right after a doctype on line 1 (so the copy keeps standards mode and
# its line numbers), else at the very start.
awk -v inj="$inject" 'NR == 1 {
        if (match(tolower($0), /<!doctype[^>]*>/))
            $0 = substr($0, 1, RSTART + RLENGTH - 1) inj substr($0, RSTART + RLENGTH)
        else
            $0 = inj $0
    } { print }' "$report" >"$probe"
log=$outdir/console.log
# --virtual-time-budget lets timers and promise jobs run (fast-forwarded) before
# the dump, so late errors are caught too.
run_chromium /dev/null "$log" --virtual-time-budget=2000 --dump-dom "$(file_url "$probe")"
console_re=':CONSOLE(:[0-9]+|\([0-9]+\))\] '
if [[ $chromium_rc -ne 0 ]]; then
    fail "console: chromium exited $chromium_rc ($took); see $log"
elif ! grep -qF "\"$canary\"" "$log"; then
    fail "console: Chromium printed no console output, not even the probe's ($took); the logging flags no longer work? see $log"
else
    # The copy sits in OUTDIR, so relative URLs resolve there; name the report's
    # own paths in the message instead.
    out_url=$(file_url "$outdir") dir_url=$(file_url "$(dirname -- "$report")")
    messages=$(grep -E "$console_re" "$log" | grep -vF "\"$canary\"" |
               sed -E -e "s/^.*$console_re//" -e "s|$out_url/console_probe.html|$url|g" \
                      -e "s|$out_url/|$dir_url/|g")
    if [[ -n $messages ]]; then
        count=$(printf '%s\n' "$messages" | wc -l)
        first=$(printf '%s\n' "$messages" | head -n 3 | cut -c1-300 |
                awk '{ printf "%s%s", (NR > 1 ? " | " : ""), $0 }')
        fail "console: $count message(s) ($took): $first"
    else
        ok "console: no console messages, no non-inline loads ($took)"
    fi
fi

# --- screenshot: the page actually paints something.
png=$outdir/report.png
run_chromium "$outdir/screenshot.stdout" "$outdir/screenshot.stderr" "--screenshot=$png" "$url"
if [[ $chromium_rc -ne 0 || ! -s $png ]]; then
    fail "screenshot: chromium exited $chromium_rc, no $png ($took); see $outdir/screenshot.stderr"
elif [[ ! -x $png_nonblank ]]; then
    fail "screenshot: $png_nonblank is not executable ($took)"
else
    verdict=$("$png_nonblank" "$png" 2>&1)
    rc=$?
    case $rc in
        0) ok "screenshot: ${verdict#png_nonblank: } ($took)" ;;
        1) fail "screenshot: blank: ${verdict#png_nonblank: } ($took)" ;;
        *) fail "screenshot: cannot read it: ${verdict#png_nonblank: } ($took)" ;;
    esac
fi

exit "$failed"
