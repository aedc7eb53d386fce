#!/usr/bin/env bash
# net-session.sh HOST PORT STOPFILE OUT: an interactive request/response session:
# one small message every 20 ms over one TCP connection (socat) to an echo server,
# each answer checked, until STOPFILE exists. Writes SESSION-PROGRESS lines (every
# 100 messages) and at the end SESSION-OK <messages> max_ms=<slowest answer>, or
# SESSION-FAIL <why>, to OUT. Every wait is bounded (30 s for one answer, 900 s in all).
host=$1 port=$2 stop=$3 out=$4
coproc S { exec socat - "TCP:$host:$port"; }
sleep 0.2
n=0 max=0
while [ ! -e "$stop" ] && [ $SECONDS -lt 900 ]; do
    n=$((n + 1))
    t0=$(date +%s%N)
    printf 'msg %d\n' "$n" >&"${S[1]}" 2>/dev/null || { echo "SESSION-FAIL write of message $n: connection gone" >>"$out"; exit 1; }
    if ! IFS= read -r -t 30 line <&"${S[0]}"; then
        echo "SESSION-FAIL no answer to message $n (connection closed or 30 s)" >>"$out"
        exit 1
    fi
    [ "$line" = "msg $n" ] || { echo "SESSION-FAIL message $n answered '$line'" >>"$out"; exit 1; }
    ms=$((($(date +%s%N) - t0) / 1000000))
    [ $ms -gt $max ] && max=$ms
    [ $((n % 100)) -eq 0 ] && echo "SESSION-PROGRESS $n max_ms=$max" >>"$out"
    sleep 0.02
done
exec {S[1]}>&-
echo "SESSION-OK $n max_ms=$max" >>"$out"
