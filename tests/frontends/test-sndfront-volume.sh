#!/usr/bin/env bash
# The shadow mixer: amixer -D understudy (the ctl plugin) sets the card's
# volume and mute in understudy-sndfront, and what aplay plays through the
# shadow PCM has them: muted it records silence and at 0 dB the frame counter
# bit-exact (as test-sndback-volume.sh checks sndback). Then -6 dB on the left
# channel and the right one muted, while the driver domain is destroyed and
# replaced under aplay: the recording is, frame for frame, the audio at that
# volume (the left channel scaled as sndback scales it, the right silent) with
# one gap and nothing else, before the fault and after it (the new sndback got
# volume and mute from the daemon), and amixer reads back what was set. Bad
# values, through amixer (clamped) and as raw protocol (refused; a malformed
# message closes that client), leave the daemon running and the values as
# they were.
. "$(dirname "$0")/../snd/snd-functions.sh"
. "$(dirname "$0")/../backends/vsnd-functions.sh"
. "$(dirname "$0")/snd-functions.sh"
requires amixer perl
[ -f "$SND_CTL_SO" ] || skip "the shadow mixer is not built (libasound2-dev missing?)"
# The default card, and a second PCM device (mono playback, and capture) that
# nothing plays on: its controls are the second of each name.
VSND_CARD+=(1/name=second 1/0/type=p 1/0/unique-id=alsa:null 1/0/channels-max=1
    1/1/type=c 1/1/unique-id=alsa:null#in)
snd_fe_setup --deadline-ms 1000

mixer() { amixer -D understudy "$@" || fail "amixer $* failed (exit $?)"; }
# ctl_values NAME [INDEX]: the element's values as amixer cget shows them ("108,108").
ctl_values() { mixer cget "name='$1',index=${2:-0}" | sed -n 's/^ *: values=//p'; }
expect_mixer() {
    expect_eq "$1: PCM Playback Volume" "$(ctl_values 'PCM Playback Volume')" "$2"
    expect_eq "$1: PCM Playback Switch" "$(ctl_values 'PCM Playback Switch')" "$3"
}
play() {
    aplay -q -D understudy "$1" 2>"$TEST_TMP/aplay.err" ||
        fail "aplay: $(cat "$TEST_TMP/aplay.err")"
}
alive() { "$XENSIM" info guest | grep -q state=running || fail "understudy-sndfront died $*"; }
# settle: sndback has played out the stream's tail: the recording did not grow
# for 0.5 s (a running PCM adds a period every 125 ms here).
settle() {
    local i a b
    b=$(stat -c %s "$REC")
    for ((i = 0; i < 30; i++)); do
        sleep 0.5
        a=$b b=$(stat -c %s "$REC")
        [ "$a" = "$b" ] && return 0
    done
    fail "the recording still grows after 15 s"
}

# The card's mixer, as ALSA mixers see it: a volume and a switch per stream,
# the element index counting the streams of a direction.
mixer scontrols | sed 's/^/  | /'
expect_eq "simple controls" "$(mixer scontrols | tr '\n' ' ')" "Simple mixer control 'PCM',0 \
Simple mixer control 'PCM',1 Simple mixer control 'Capture',0 Simple mixer control 'Capture',1 "
mixer sget PCM,1 | grep -q 'Playback channels: Mono' || fail "PCM,1: $(mixer sget PCM,1)"
mixer cget name='PCM Playback Volume' | grep -q 'dBscale-min=-60.00dB,step=0.50dB,mute=1' ||
    fail "PCM Playback Volume has no dB scale of -60..0 dB in 0.5 dB steps"
expect_mixer "at start (0 dB, on)" 120,120 on,on

# 1. Muted, then 0 dB: a second of silence, then the counter bit-exact.
"$SNDGEN" -r 48000 -f S16_LE -c 2 -d 1 -o "$TEST_TMP/a0.wav" || fail "sndgen"
"$SNDGEN" -r 48000 -f S16_LE -c 2 -d 1 --start 48000 -o "$TEST_TMP/a1.wav" || fail "sndgen"
mixer -q sset PCM mute
expect_mixer "muted" 120,120 off,off
play "$TEST_TMP/a0.wav"
mixer -q sset PCM 0dB unmute
expect_mixer "0 dB, on" 120,120 on,on
play "$TEST_TMP/a1.wav"
settle
check "$REC"
expect_summary runs 1 repeats 0 corrupt 0 channel_errors 0 format_errors 0 silence 48000
expect_line '^run first=48000 last=95999 frames=48000 '
mv "$REC" "$TEST_TMP/rec-mute.usck" # the next stream opens a new recording

# 2. -6 dB, the right channel muted, across a driver-domain replacement.
mixer -q -- sset PCM -6dB
mixer -q sset PCM on,off
expect_mixer "-6 dB, right muted" 108,108 on,off
mixer sget PCM | grep -q 'Front Right: Playback 108 \[90%\] \[-6.00dB\] \[off\]' ||
    fail "sget PCM: $(mixer sget PCM)"
"$SNDGEN" -r 48000 -f S16_LE -c 2 -d 10 -o "$TEST_TMP/b.wav" || fail "sndgen"
"$SNDGEN" -r 48000 -f S16_LE -c 2 -d 10 --raw -o "$TEST_TMP/b.raw" || fail "sndgen"
# What sndback makes of it (sb_volume.c): the left channel times 10^(-6000/20000),
# rounded with lrint, the right channel silence.
perl -MPOSIX=lrint -e '
    local $/; my @s = unpack("s<*", <STDIN>); my $g = 10 ** (-6000 / 20000);
    for (my $i = 0; $i < @s; $i += 2) { $s[$i] = lrint($s[$i] * $g); $s[$i + 1] = 0 }
    print pack("s<*", @s)' <"$TEST_TMP/b.raw" >"$TEST_TMP/ref.raw" || fail "perl"
aplay -q -D understudy "$TEST_TMP/b.wav" 2>"$TEST_TMP/aplay.err" &
apid=$!
sleep "$(echo "2.5 + 0.$((RANDOM % 10))" | bc)"
kill -0 $apid 2>/dev/null || fail "aplay ended before the fault"
replace_sndback drv0 drv1 "$guest" >/dev/null
wait_for 10 sf_live_n "$guest" 1
log "fault: '$(sf_key "$guest" shadow/report)'; gap=$(sf_key "$guest" shadow/last-gap) ms"
expect_mixer "after the recovery" 108,108 on,off
wait $apid || fail "aplay failed: $(cat "$TEST_TMP/aplay.err")"
settle
# sndcheck searches 10 s ahead at each frame that differs from the reference: a
# recording far from it (the volume not applied) would take it hours; one that
# matches takes it a second.
cat >"$TEST_TMP/sndcheck-60s" <<EOF
#!/bin/sh
timeout 60 "$SNDCHECK" "\$@"
rc=\$?
[ \$rc -ne 124 ] || echo "sndcheck: gave up after 60 s: the recording is far from the reference" >&2
exit \$rc
EOF
chmod +x "$TEST_TMP/sndcheck-60s"
SNDCHECK=$TEST_TMP/sndcheck-60s check "$REC" --timing --ref "$TEST_TMP/ref.raw"
ref=$(grep '^reference ' <<<"$CHECK_OUT")
[ -n "$ref" ] || fail "sndcheck made no comparison with the reference"
expect_eq "frames differing from the reference" "$(field "$ref" differ)" 0
expect_eq "frames not in the reference" "$(field "$ref" extra)" 0
mapfile -t gaps < <(grep '^ref-missing ' <<<"$CHECK_OUT")
expect_eq "gaps" "${#gaps[@]}" 1
at=$(field "${gaps[0]}" ref_at) missing=$(field "${gaps[0]}" frames) ms=$(field "${gaps[0]}" ms)
total=$(($(field "$ref" lead_silence_ref) + $(field "$ref" ref_frames)))
before=$at after=$((total - at - missing))
log "at the volume: $before frames before the fault, $after after it; gap $missing frames ($ms ms)"
# A recovery's gap (test-sndfront-kill-rewire.sh measures it; here only the
# volume counts, so a busy machine's slower recovery is let pass).
[ "${ms%.*}" -lt 3000 ] || fail "a gap of $ms ms"
expect_eq "frames matched" "$(field "$ref" matched)" $((total - missing))
[ "$before" -ge 48000 ] || fail "only $before frames before the fault"
[ "$after" -ge 96000 ] || fail "only $after frames after the recovery"
expect_mixer "after playing" 108,108 on,off

# 3. Bad values. amixer clamps to the element's range before the plugin sees them.
mixer -q cset name='PCM Playback Volume' 500
expect_mixer "cset 500" 120,120 on,off
mixer -q cset name='PCM Playback Volume' -- -20
expect_mixer "cset -20" 0,0 on,off
mixer -q cset name='PCM Playback Switch' 7
expect_mixer "cset switch 7" 0,0 on,on
amixer -D understudy cset numid=99 1 >/dev/null 2>&1 && fail "cset of an element not there"
amixer -D understudy sset PCM,2 50% >/dev/null 2>&1 && fail "sset of a control not there"
mixer -q -- sset PCM -6dB
mixer -q sset PCM on,off
alive "after amixer's bad values"
# The daemon's own checks, as raw protocol (sn_proto.h): out-of-range values,
# channel counts and streams are refused with a status; a message that makes no
# sense closes that client. One line per request: its name and the answer.
cat >"$TEST_TMP/raw.pl" <<'PERL'
use strict;
use Socket;
my ($path) = @ARGV;
my $seq = 0;
$SIG{PIPE} = "IGNORE";
my ($HELLO, $START, $VOL_GET, $VOL_SET, $VOL, $REPLY) = (1, 5, 9, 10, 11, 12);
# The status of the answer of type $rtype, or "closed" (the daemon closed us).
sub ask {
    my ($s, $m, $rtype) = @_;
    substr($m, 4, 4) = pack("L", ++$seq);
    send($s, $m, 0) // return "closed";
    my $r = "";
    defined(recv($s, $r, 256, 0)) && length($r) >= 12 or return "closed";
    my ($t, $q, $st) = unpack("L L l", $r);
    return $t == $rtype && $q == $seq ? $st : "bad-answer";
}
sub mixer {
    socket(my $s, AF_UNIX, SOCK_SEQPACKET, 0) or die "socket: $!";
    connect($s, pack_sockaddr_un($path)) or die "connect $path: $!";
    ask($s, pack("L7", $HELLO, 0, 1, 2, 0, 0, $$), $REPLY) eq "0" or die "HELLO refused";
    return $s;
}
# struct snp_vol: hdr, status, stream, pcm_device, capture, channels, vol[8], mute[8]
sub vol {
    my ($stream, $ch, @v) = @_;
    return pack("L2 l L4 l8 C8", $VOL_SET, 0, 0, $stream, 0, 0, $ch, @v, (0) x (8 - @v), (0) x 8);
}
my $s = mixer();
print "set+30dB ", ask($s, vol(0, 2, 30000, 0), $REPLY), "\n";
print "set-250dB ", ask($s, vol(0, 2, 0, -250000), $REPLY), "\n";
print "set0channels ", ask($s, vol(0, 0), $REPLY), "\n";
print "set9channels ", ask($s, vol(0, 9, (0) x 8), $REPLY), "\n";
print "setstream99 ", ask($s, vol(99, 2, 0, 0), $REPLY), "\n";
print "getstream99 ", ask($s, pack("L3", $VOL_GET, 0, 99), $VOL), "\n";
print "getshort ", ask($s, pack("L2", $VOL_GET, 0), $VOL), "\n";
print "startfrommixer ", ask(mixer(), pack("L2 Q2", $START, 0, 0, 0), $REPLY), "\n";
print "setlong ", ask(mixer(), vol(0, 2, 0, 0) . "x", $REPLY), "\n";
PERL
timeout 20 perl "$TEST_TMP/raw.pl" "$SOCK" >"$TEST_TMP/raw.out" 2>&1 ||
    fail "the raw client: $(cat "$TEST_TMP/raw.out")"
sed 's/^/  | /' "$TEST_TMP/raw.out"
# -ERANGE, -EINVAL, -ENOENT; the last three close the client.
expect_eq "raw protocol" "$(tr '\n' ' ' <"$TEST_TMP/raw.out")" "set+30dB -34 set-250dB -34 \
set0channels -22 set9channels -22 setstream99 -2 getstream99 -2 getshort closed \
startfrommixer closed setlong closed "
alive "after bad protocol"
expect_mixer "after the bad values" 108,108 on,off
# Each control is its own stream's.
mixer -q -- sset PCM,1 -10dB mute
mixer -q cset name='Capture Volume' 60
expect_eq "PCM,1's volume" "$(ctl_values 'PCM Playback Volume' 1)" 100
expect_eq "PCM,1's switch" "$(ctl_values 'PCM Playback Switch' 1)" off
expect_eq "Capture's volume" "$(ctl_values 'Capture Volume')" 60,60
expect_eq "Capture,1's volume" "$(ctl_values 'Capture Volume' 1)" 120,120
expect_mixer "after setting the others" 108,108 on,off
grep -q 'a message of the wrong length' "$TEST_TMP/guest.log" ||
    fail "the daemon did not say why it closed a client"
snd_sanitizer_check
exit 0
