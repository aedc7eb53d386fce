#!/usr/bin/env bash
# A driver domain owns its backend dirs, so it can rewrite the toolstack's
# keys there: params (another guest's image), mode (w on a read-only disk).
# shadowd records a device's keys until it is first paired and not after, so
# such a rewrite is logged and not recorded, and the domain shadowd starts
# after a crash gets the keys as the toolstack wrote them.
source "$(dirname "$0")/../functions.sh"
source "$(dirname "$0")/dom0-functions.sh"
requires jq xenstore-read
sd_one_device_setup
be1=$(be_dir "$D1" "$G" 51712)
orig=$(xenstore-read "$be1/params")
# The driver domain itself writes (its own dir: its permission, not dom0's).
"$XENSIM" exec "$D1" -- xenstore-write "$be1/params" "$TEST_TMP/someone-elses.img" "$be1/mode" w \
    "$be1/cache" none || fail "the driver domain could not write its own backend dir"
wait_for 10 sd_log_has "toolstack keys in $be1 changed after the device was paired; not recorded"
expect_eq "recorded params" "$(sd_q drv '.devices[0].keys.params')" "$orig"
expect_eq "recorded cache" "$(sd_q drv '.devices[0].keys.cache')" writeback
sd_crash_and_recover
be2=$(be_dir "$D2" "$G" 51712)
expect_eq "params in the new domain" "$(xenstore-read "$be2/params")" "$orig"
expect_eq "mode in the new domain" "$(xenstore-read "$be2/mode")" w
expect_eq "cache in the new domain" "$(xenstore-read "$be2/cache")" writeback
# And across shadowd's own restart (the record comes back from its state file, frozen).
sd_stop
sd_start
wait_for 10 sd_recorded_is drv 1
"$XENSIM" exec "$D2" -- xenstore-write "$be2/params" "$TEST_TMP/someone-elses.img" ||
    fail "the driver domain could not write its own backend dir"
wait_for 10 sd_log_has "toolstack keys in $be2 changed after the device was paired; not recorded"
expect_eq "recorded params after shadowd's restart" "$(sd_q drv '.devices[0].keys.params')" "$orig"
exit 0
