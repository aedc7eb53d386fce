#!/usr/bin/env bash
# Domains are process groups: create, list, pause (SIGSTOP), unpause, shutdown
# with a reason, destroy; the leader exiting shuts the domain down (0 poweroff,
# otherwise crash); domids are not reused at once; bad requests get clear errors.
source "$(dirname "$0")/../functions.sh"
start_sim
state() { "$XENSIM" info "$1" | sed -n 's/^state=//p'; }
reason() { "$XENSIM" info "$1" | sed -n 's/^shutdown_reason=//p'; }
pid_of() { "$XENSIM" info "$1" | sed -n 's/^pid=//p'; }

a=$(new_dom a)
expect_eq "first domid" "$a" 1
expect_eq "state after create" "$(state a)" running
"$XENSIM" list | grep -qE "^1 +a +running" || fail "list does not show a: $("$XENSIM" list)"
"$XENSIM" list --json | grep -q '"name":"a","state":"running"' || fail "list --json"

# Pause stops every process of the group; unpause resumes them.
p=$(pid_of a)
"$XENSIM" pause a
expect_eq "state after pause" "$(state a)" paused
wait_for 5 sh -c "grep -q '^State:.*T' /proc/$p/status"
"$XENSIM" unpause a
expect_eq "state after unpause" "$(state a)" running
wait_for 5 sh -c "! grep -q '^State:.*T' /proc/$p/status"
"$XENSIM" pause 0 2>/dev/null && fail "pausing dom0 must fail"

# Shutdown reasons: crash and watchdog from the CLI, poweroff/crash from the leader's exit.
"$XENSIM" crash a
expect_eq "state after crash" "$(state a)" shutdown
expect_eq "reason after crash" "$(reason a)" crash
wait_for 5 sh -c "! kill -0 $p"
b=$(new_dom b)
"$XENSIM" watchdog b
expect_eq "reason after watchdog" "$(reason b)" watchdog
c=$(new_dom c sh -c 'exit 0')
"$XENSIM" wait c --until shutdown --timeout 10
expect_eq "reason after exit 0" "$(reason c)" poweroff
d=$(new_dom d sh -c 'exit 3')
"$XENSIM" wait d --until shutdown --timeout 10
expect_eq "reason after exit 3" "$(reason d)" crash
"$XENSIM" info d | grep -qx exit_status=3 || fail "exit status not reported"

# Destroy: gone from the list; a process that left the group dies too.
e=$(new_dom e sh -c 'setsid sleep 100000 & echo "escaped=$!"; sleep 100000')
wait_for 5 grep -q escaped= "$TEST_TMP/e.log"
esc=$(sed -n 's/escaped=//p' "$TEST_TMP/e.log")
kill -0 "$esc" || fail "escaped process not running"
"$XENSIM" destroy e
"$XENSIM" info e 2>/dev/null && fail "destroyed domain still listed"
wait_for 5 sh -c "! kill -0 $esc 2>/dev/null || grep -q '^State:.*Z' /proc/$esc/status"
for x in a b c d; do "$XENSIM" destroy $x; done
expect_eq "domains left" "$("$XENSIM" list | tail -n +2 | wc -l)" 1

# domids count up, not reused at once.
f=$(new_dom f)
expect_eq "domid after destroys" "$f" 6

# A process run with `xensim exec` acts as the domain and dies with it.
h=$(new_dom h)
"$XENSIM" exec h -- sleep 100000 &
ex=$!
wait_for 5 sh -c "grep -q XENSIM_DOMAIN_TAG /proc/$ex/environ"
"$XENSIM" destroy h
wait_for 5 sh -c "! kill -0 $ex 2>/dev/null"

# Clear errors, nothing left behind.
out=$("$XENSIM" create --name g -- /nonexistent/prog 2>&1) && fail "exec failure not reported"
echo "$out" | grep -q "No such file" || fail "unclear error: $out"
"$XENSIM" info g 2>/dev/null && fail "failed create left a domain"
out=$("$XENSIM" create --name f -- sleep 1 2>&1) && fail "duplicate name accepted"
echo "$out" | grep -q "already exists" || fail "unclear duplicate-name error: $out"
out=$("$XENSIM" destroy 4000 2>&1) && fail "destroying a missing domain succeeded"
echo "$out" | grep -qi "no such process\|4000" || fail "unclear error: $out"
out=$("$XENSIM" shutdown f sideways 2>&1) && fail "bad reason accepted"
exit 0
