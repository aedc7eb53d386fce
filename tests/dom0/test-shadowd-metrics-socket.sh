#!/usr/bin/env bash
# The metrics socket speaks enough HTTP for a scraper (curl --unix-socket,
# or a proxy), in the Prometheus text format; the control socket is dom0
# root's only (mode 0600); shadowctl explains when shadowd is not there.
source "$(dirname "$0")/../functions.sh"
source "$(dirname "$0")/dom0-functions.sh"
requires jq curl
start_sim
sd_conf
sd_domain drv
sd_start
d=$(sd_wait_up drv)
out=$(curl -sf --max-time 5 --unix-socket "$TEST_TMP/run/metrics.sock" http://localhost/metrics) ||
    fail "curl on the metrics socket"
echo "$out" | grep -q '^# TYPE shadowd_recoveries_total counter$' || fail "no TYPE line: $out"
echo "$out" | grep -qx 'shadowd_domain_state{domain="drv",state="up"} 1' || fail "state: $out"
echo "$out" | grep -qx 'shadowd_devices{domain="drv"} 0' || fail "devices: $out"
# Every sample line is "name{labels} value" or "name value".
bad=$(echo "$out" | grep -v '^#' | grep -vE '^[a-z_]+(\{[a-z_]+="[^"]*"(,[a-z_]+="[^"]*")*\})? [0-9]+$' || true)
[ -z "$bad" ] || fail "malformed samples: $bad"
expect_eq "control socket mode" "$(stat -c %a "$TEST_TMP/run/shadowd.sock")" 600
# A client that sends nothing is dropped, and shadowd carries on.
exec 9<>/dev/null
python3 -c "import socket,time; s=socket.socket(socket.AF_UNIX); s.connect('$TEST_TMP/run/shadowd.sock'); time.sleep(0.3)" 2>/dev/null || true
sdctl status >/dev/null || fail "shadowd stuck after an idle client"
sd_stop
out=$("$SHADOWCTL" -s "$SD_SOCK" status 2>&1) && fail "status without shadowd"
echo "$out" | grep -q "cannot reach shadowd at $SD_SOCK" || fail "message: $out"
"$XENSIM" info "$d" >/dev/null || fail "stopping shadowd stopped the driver domain"
exit 0
