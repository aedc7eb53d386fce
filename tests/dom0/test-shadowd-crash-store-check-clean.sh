#!/usr/bin/env bash
# The store passes shadowctl check (the xenstore schema) with a recorded
# device, and again after a crash and its recovery.
source "$(dirname "$0")/../functions.sh"
source "$(dirname "$0")/dom0-functions.sh"
requires jq xenstore-read
sd_one_device_setup
expect_check_clean
sd_crash_and_recover
expect_check_clean
exit 0
