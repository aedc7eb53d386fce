#!/usr/bin/env bash
# fs-workload.sh DIR MANIFEST SECONDS SEED: a file workload for the shadow
# blkfront's filesystem tests. Creates files of random sizes, appends to a
# growing file, deletes some, and after each change is fsynced (file and
# directory) records it in MANIFEST (outside the filesystem): "NAME SHA256"
# or "NAME DELETED". Any failing command is an error the application saw:
# prints WORKLOAD-ERROR and exits 1. Ends with WORKLOAD-OK (operations, live
# files, bytes written), after SECONDS or as soon as MANIFEST.stop exists.
set -u
dir=$1 man=$2 secs=$3
RANDOM=$4
end=$(($(date +%s) + secs))
n=0 bytes=0 live=()
err() {
    echo "WORKLOAD-ERROR op $n: $*"
    exit 1
}
record() { echo "$1 $(sha256sum <"$dir/$1" | cut -d' ' -f1)" >>"$man" || err "manifest"; }
: >"$man"
while [ "$(date +%s)" -lt "$end" ] && [ ! -e "$man.stop" ]; do
    n=$((n + 1))
    r=$((RANDOM % 10))
    [ ${#live[@]} -ge 120 ] && r=8 # keep the filesystem from filling up
    if [ $r -lt 6 ] || [ ${#live[@]} -eq 0 ]; then
        f=f$n
        sz=$(((RANDOM % 384 + 1) * 1024 + RANDOM % 1000))
        head -c $sz /dev/urandom >"$dir/$f.tmp" || err "write $f"
        bytes=$((bytes + sz))
        sync "$dir/$f.tmp" || err "fsync $f"
        mv "$dir/$f.tmp" "$dir/$f" || err "rename $f"
        sync "$dir" || err "fsync dir"
        record "$f"
        live+=("$f")
    elif [ $r -lt 8 ]; then
        [ -f "$dir/log" ] && [ "$(stat -c %s "$dir/log")" -gt 16777216 ] && : >"$dir/log"
        sz=$((RANDOM % 16384 + 1))
        head -c $sz /dev/urandom >>"$dir/log" || err "append"
        bytes=$((bytes + sz))
        sync "$dir/log" "$dir" || err "fsync log"
        record log
    elif [ $r -lt 9 ]; then
        i=$((RANDOM % ${#live[@]}))
        f=${live[$i]}
        rm "$dir/$f" || err "rm $f"
        sync "$dir" || err "fsync dir"
        echo "$f DELETED" >>"$man"
        live=("${live[@]:0:$i}" "${live[@]:$((i + 1))}")
    else
        sync -f "$dir" || err "syncfs"
    fi
done
echo "WORKLOAD-OK ops=$n files=${#live[@]} bytes=$bytes"
