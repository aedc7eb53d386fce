#!/usr/bin/env bash
# A driver domain serving a shadow-aware frontend and a stock one (a guest
# kernel's own driver, tfe --stock: no shadow/ keys, closed for good at the
# first fault). When the domain dies, the stock frontend's device is rewired
# like every other, but the recovery does not wait the reconnect-timeout for
# it: it ends as soon as the shadow-aware frontend is back, counts as a
# success, and reports the stock one apart. Then a recovery that ends
# partial (the shadow-aware frontend frozen past the reconnect-timeout) logs
# its own phases, not the previous recovery's.
source "$(dirname "$0")/../functions.sh"
source "$(dirname "$0")/dom0-functions.sh"
requires jq xenstore-read
TIMEOUT_S=6
start_sim
sd_conf
sd_domain drv "reconnect-timeout ${TIMEOUT_S}s"
sd_start
d1=$(sd_wait_up drv)
a=$(new_dom guest-a)
b=$(new_dom guest-b)
dev_add "$a" "$d1" 51712
dev_add "$b" "$d1" 51712
fe_start "$a" 51712
fe_start "$b" 51712 --stock
wait_recovered "$a" 51712 0
_stock_connected() { [ "$(fe_key "$b" 51712 state)" = 4 ]; }
wait_for 10 _stock_connected
wait_for 10 sd_recorded_is drv 2
[ -z "$(fe_key "$b" 51712 shadow/state)" ] || fail "the stock frontend wrote shadow/state"

# Death: the shadow-aware frontend is back; the recovery does not wait for the
# stock one.
"$XENSIM" crash "$d1"
wait_recovered "$a" 51712 1
d2=$(sd_domid drv)
[ "$d2" != "$d1" ] || fail "no new driver domain"
h=$(sdctl history --json | jq -c '.[-1]')
log "recovery: $h"
expect_eq "recovery ok" "$(echo "$h" | jq -r .ok)" true
echo "$h" | jq -r .outcome | grep -q "1 of 1 devices reconnected; 1 stock frontend rewired, not waited for" ||
    fail "outcome does not report the stock frontend apart: $(echo "$h" | jq -r .outcome)"
reconnect_ms=$(echo "$h" | jq -r .reconnect_ms)
[ "$reconnect_ms" -lt $((TIMEOUT_S * 1000)) ] ||
    fail "the recovery waited out the reconnect-timeout ($reconnect_ms ms) for the stock frontend"
expect_eq "stock device rewired" "$(fe_key "$b" 51712 backend-id)" "$d2"
_stock_closed() { [ "$(fe_key "$b" 51712 state)" = 6 ]; }
wait_for 10 _stock_closed
id=$(echo "$h" | jq -r .id)
sd_log_has "recovery $id: done in [0-9]+ ms \(detect=[0-9]+ restart=[0-9]+ rewire=[0-9]+ reconnect=[0-9]+ total=[0-9]+\)" ||
    fail "the done line lacks the recovery's phases"
expect_check_clean

# A partial recovery: the shadow-aware frontend frozen, so it never reconnects.
fe_freeze "$a" 51712
"$XENSIM" crash "$d2"
n0=$(sdctl history --json | jq -r 'length')
_partial_done() { [ "$(sdctl history --json | jq -r 'length')" -gt "$n0" ] && sd_state_is drv up; }
wait_for $((TIMEOUT_S + 20)) _partial_done
h=$(sdctl history --json | jq -c '.[-1]')
log "partial recovery: $h"
expect_eq "partial recovery ok" "$(echo "$h" | jq -r .ok)" false
line=$(grep -E "recovery $(echo "$h" | jq -r .id): done in" "$SD_LOG" | tail -1)
log "$line"
echo "$line" | grep -qE "\(detect=[0-9]+ restart=[0-9]+ rewire=[0-9]+ reconnect=[0-9]+ total=[0-9]+\).*PARTIAL" ||
    fail "the partial recovery's done line lacks its own phases: $line"
rec=$(echo "$h" | jq -r .reconnect_ms)
echo "$line" | grep -q "reconnect=$rec " || fail "the done line shows another recovery's phases: $line (history: reconnect $rec)"
fe_thaw "$a" 51712
wait_recovered "$a" 51712 2 20
exit 0
