#!/usr/bin/env bash
# A malformed or hostile card description (the frontend's dir, as libxl
# writes it, but wrong) gives an error node naming the key and state Closed;
# sndback stays up; a frontend that re-initialises with the card fixed gets
# it.
. "$(dirname "$0")/../snd/snd-functions.sh"
. "$(dirname "$0")/vsnd-functions.sh"
snd_setup
[ -x "$SNDBACK" ] || skip "sndback not built (libasound2-dev missing?)"
start_sim
drv=$(new_dom drv)
guest=$(new_dom guest)
ok=(0/0/type=p 0/0/unique-id=a)
# CASE: keys... | the error's text
cases=(
    "0/0/unique-id=a|0/0/type: missing"
    "0/0/type=x 0/0/unique-id=a|not p or c"
    "0/0/type=p|0/0/unique-id: missing"
    "0/0/type=p 0/0/unique-id=a 0/1/type=c 0/1/unique-id=a|not unique on the card"
    "sample-rates=abc ${ok[*]}|not a list of rates"
    "sample-rates=0 ${ok[*]}|not 1..768000 Hz"
    "sample-rates=44100, ${ok[*]}|not a list of rates"
    "sample-formats=s16_le,bogus ${ok[*]}|unknown format"
    "sample-formats=mpeg ${ok[*]}|without a fixed sample size"
    "channels-min=3 channels-max=2 ${ok[*]}|are empty"
    "channels-max=999 ${ok[*]}|not a number in 1..64"
    "buffer-size=1x ${ok[*]}|not a number"
    "buffer-size=99999999999 ${ok[*]}|not a number in 1..16777216"
    "sample-rates=44100,48000 0/0/sample-rates=96000 0/0/type=p 0/0/unique-id=a|not a subset of the rates"
    "sample-formats=s16_le 0/sample-formats=s32_le ${ok[*]}|not a subset of the formats"
    "channels-max=2 0/0/channels-max=4 ${ok[*]}|not inside 1..2"
    "buffer-size=4096 0/buffer-size=8192 ${ok[*]}|not a number in 1..4096"
    "0/0/type=p 0/0/unique-id=alsa:|alsa: without a PCM name"
    "short-name=x|no PCM device with a stream"
    "0/name=x 1/0/type=p 1/0/unique-id=a|a PCM device without streams"
)
dev=0
for c in "${cases[@]}"; do
    keys=${c%%|*} want=${c#*|}
    dev=$((dev + 1))
    # shellcheck disable=SC2086
    vsnd_add "$guest" "$drv" "$dev" $keys
    sndback_start "$drv" "$guest" "$dev"
    wait_for 10 sb_state_is "$drv" "$guest" "$dev" 6
    err=$(xenstore-read "$(vsnd_be "$drv" "$guest" "$dev")/error")
    log "[$keys] -> $err"
    grep -qF -- "$want" <<<"$err" || fail "[$keys]: error '$err' does not say '$want'"
    sndback_alive || fail "[$keys]: sndback exited"
done
# The last one, fixed: the frontend's re-initialising retries the setup.
fe=$(vsnd_fe "$guest" "$dev")
xenstore-rm "$fe/1"
xenstore-write "$fe/0/0/type" p "$fe/0/0/unique-id" alsa:clocked
xenstore-write "$fe/state" 6
sleep 0.3
xenstore-write "$fe/state" 1
wait_for 10 sb_state_is "$drv" "$guest" "$dev" 2
sfront "$guest" "$dev" connect open 0 48000 s16_le 2 8192 1024 close 0 disconnect ||
    fail "the fixed card does not work"
exit 0
