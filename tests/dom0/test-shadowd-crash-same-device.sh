#!/usr/bin/env bash
# After a crash, the frontend reconnects (shadow/state live, one recovery) to
# the same device: the new backend serves as many sectors as the old one.
source "$(dirname "$0")/../functions.sh"
source "$(dirname "$0")/dom0-functions.sh"
requires jq xenstore-read
sd_one_device_setup
sectors=$(xenstore-read "$(be_dir "$D1" "$G" 51712)/sectors")
sd_crash_and_recover
expect_eq "FE/shadow/state" "$(fe_key "$G" 51712 shadow/state)" live
expect_eq "the same device (sectors from params)" \
    "$(xenstore-read "$(be_dir "$D2" "$G" 51712)/sectors")" "$sectors"
exit 0
