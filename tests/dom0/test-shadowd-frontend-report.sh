#!/usr/bin/env bash
# A frontend's report restarts a driver domain that serves only its guest:
# the backend stops serving (the domain and its heartbeat stay fine), the
# frontend times out and reports, shadowd restarts the domain. Reports are
# hostile input: a malformed or oversized one is ignored, and a guest gets
# only report-budget report-triggered restarts per report-window.
source "$(dirname "$0")/../functions.sh"
source "$(dirname "$0")/dom0-functions.sh"
requires jq xenstore-read
start_sim
sd_conf "report-budget 1" "report-window 10m"
sd_domain drv
sd_start
d1=$(sd_wait_up drv)
g=$(new_dom guest)
dev_add "$g" "$d1" 51712
fe=$(fe_dir "$g" 51712)
fe_start "$g" 51712 --deadline-ms 500
wait_recovered "$g" 51712 0
wait_for 10 sd_recorded_is drv 1

# Garbage from the guest changes nothing (report-interval apart: within it
# only the latest value would be looked at).
as_dom "$g" xenstore-write "$fe/shadow/report" "not a report" || fail "guest write"
wait_for 5 sd_log_has "malformed report .*no decimal <seq>"
as_dom "$g" xenstore-write "$fe/shadow/report" "7 meltdown all of it" || fail "guest write"
wait_for 5 sd_log_has "malformed report .*unknown <kind>"
as_dom "$g" xenstore-write "$fe/shadow/report" "8 timeout $(head -c 400 /dev/zero | tr '\0' x)" ||
    fail "guest write"
wait_for 5 sd_log_has "over 256 bytes"
sleep 0.3
expect_eq "domain after garbage" "$(sd_domid drv)" "$d1"
expect_eq "reports ignored" "$(sd_q drv .reports_ignored)" 3

# The backend hangs: the frontend reports a timeout, shadowd acts on it.
sdctl inject drv backend-hang >/dev/null || fail "shadowctl inject drv backend-hang"
wait_recovered "$g" 51712 1
d2=$(sd_domid drv)
[ "$d2" != "$d1" ] || fail "no new driver domain after the report"
sd_log_has "detect: guest $g, its only guest, reports timeout on vbd 51712" || fail "reason"
expect_eq "detected by" "$(sdctl metrics | sed -n 's/^shadowd_detections_total{domain="drv",source="report"} //p')" 1
expect_check_clean

# Over its budget (1 per 10 minutes) the guest's next report is ignored.
sdctl inject drv backend-hang >/dev/null || fail "second inject"
wait_for 10 sd_log_has "has used its budget of 1 report-triggered recoveries"
sleep 0.5
expect_eq "domain after an over-budget report" "$(sd_domid drv)" "$d2"
expect_eq "recoveries" "$(sd_q drv .recoveries)" 1
expect_check_clean
exit 0
