#!/usr/bin/env bash
# After a crash, the guest's frontend dir is updated in place: backend,
# backend-id and permissions point at the new domain, shadow/generation is
# bumped; the dir is never deleted (a guest's own key survives) and its state
# is left to the frontend.
source "$(dirname "$0")/../functions.sh"
source "$(dirname "$0")/dom0-functions.sh"
requires jq xenstore-read
sd_one_device_setup
sd_crash_and_recover
expect_eq "FE/backend" "$(fe_key "$G" 51712 backend)" "$(be_dir "$D2" "$G" 51712)"
expect_eq "FE/backend-id" "$(fe_key "$G" 51712 backend-id)" "$D2"
expect_eq "FE/shadow/generation" "$(fe_key "$G" 51712 shadow/generation)" 1
expect_eq "FE dir kept in place" "$(fe_key "$G" 51712 test-marker)" kept
expect_eq "FE/state (the frontend's)" "$(fe_key "$G" 51712 state)" 4
expect_eq "FE perms" "$(xenstore-ls -p "$(dirname "$FE")" | sed -n 's/^51712 = .*(\(.*\))$/\1/p')" \
    "n$G,r$D2"
exit 0
