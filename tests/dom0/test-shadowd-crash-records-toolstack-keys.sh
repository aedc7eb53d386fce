#!/usr/bin/env bash
# What shadowd records of a device is the toolstack's keys, not what the
# backend published or what shadowd itself rewrites on a rewire.
source "$(dirname "$0")/../functions.sh"
source "$(dirname "$0")/dom0-functions.sh"
requires jq xenstore-read
sd_one_device_setup
keys=$(sd_q drv '.devices[0].keys | keys | join(" ")')
for k in params mode type dev cache rate device-type removable bootable; do
    [[ " $keys " == *" $k "* ]] || fail "toolstack key $k not recorded (recorded: $keys)"
done
for k in state sectors feature-tbe info tbe-pid frontend frontend-id online; do
    [[ " $keys " == *" $k "* ]] && fail "backend-published or rewritten key $k was recorded ($keys)"
done
exit 0
