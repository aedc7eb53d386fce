#!/usr/bin/env bash
# After a crash, the new driver domain's backend dir holds the recorded
# toolstack keys and the frontend's address, with the backend's permissions
# (the new domain owns it, the guest reads it).
source "$(dirname "$0")/../functions.sh"
source "$(dirname "$0")/dom0-functions.sh"
requires jq xenstore-read
sd_one_device_setup
sd_crash_and_recover
be2=$(be_dir "$D2" "$G" 51712)
for kv in params="$TEST_TMP/disk-$G-51712.img" mode=w cache=writeback rate=10Mb/s \
          frontend="$FE" frontend-id="$G" online=1; do
    expect_eq "new BE/${kv%%=*}" "$(xenstore-read "$be2/${kv%%=*}")" "${kv#*=}"
done
expect_eq "new BE perms" "$(xenstore-ls -p "$(dirname "$be2")" | sed -n 's/^51712 = .*(\(.*\))$/\1/p')" \
    "n$D2,r$G"
exit 0
