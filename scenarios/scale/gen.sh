#!/bin/sh
# Generates the scale scenarios of docs/PERFORMANCE.md ("Scale") on stdout.
# They are generated, not committed: 32,768 [[flow]] tables are 1.5 MB.
#
#   scenarios/scale/gen.sh flows N    one host pair, N bulk CUBIC flows
#   scenarios/scale/gen.sh pairs N    N host pairs on one switch, one flow each
#   scenarios/scale/gen.sh chain N    N switches in a line, a host on each, N flows
#
# flows: h1 =10 Gbit/s, 5 us= sw -1 Gbit/s, 10 ms, 1000p- h2 for 10 s; every
# flow starts at 0 from h1, so h1's NIC queue (1000 packets) is full and
# most connections wait for room in it.
# pairs: a<i> -1 Gbit/s, 1 ms- sw -1 Gbit/s, 1 ms- b<i>, flow a<i> -> b<i>, 10 ms
# (the size of the network and of its validation, not of its traffic).
# chain: s0 - s1 - ... - s<N-1>, host h<i> on s<i>, every link 1 Gbit/s,
# 10 us; flow i from h<i> to h<(i + N/2) mod N> (half the chain away), 10 ms.
set -eu
kind=${1:?usage: gen.sh flows|pairs|chain N}
n=${2:?usage: gen.sh flows|pairs|chain N}
case $kind in
flows | pairs | chain) ;;
*) echo "gen.sh: unknown kind $kind (flows, pairs, chain)" >&2; exit 2 ;;
esac
awk -v kind="$kind" -v n="$n" 'BEGIN {
    if (kind == "flows") {
        printf "description = \"%d bulk CUBIC flows between one host pair (scenarios/scale/gen.sh flows %d)\"\n\n", n, n
        print "[run]\nduration = \"10s\"\nseed = 1\n"
        print "[[node]]\nname = \"h1\"\n\n[[node]]\nname = \"sw\"\nkind = \"switch\"\n\n[[node]]\nname = \"h2\"\n"
        print "[[link]]\nname = \"access\"\na = \"h1\"\nb = \"sw\"\nrate = \"10Gbit\"\ndelay = \"5us\"\n"
        print "[[link]]\nname = \"bottleneck\"\na = \"sw\"\nb = \"h2\"\nrate = \"1Gbit\"\ndelay = \"10ms\"\nqueue = \"1000p\"\n"
        for (i = 0; i < n; i++) printf "[[flow]]\nid = \"f%d\"\nfrom = \"h1\"\nto = \"h2\"\n\n", i
    } else if (kind == "pairs") {
        printf "description = \"%d host pairs on one switch (scenarios/scale/gen.sh pairs %d)\"\n\n", n, n
        print "[run]\nduration = \"10ms\"\nseed = 1\n"
        print "[[node]]\nname = \"sw\"\nkind = \"switch\"\n"
        for (i = 0; i < n; i++) printf "[[node]]\nname = \"a%d\"\n\n[[node]]\nname = \"b%d\"\n\n", i, i
        for (i = 0; i < n; i++) {
            printf "[[link]]\nname = \"la%d\"\na = \"a%d\"\nb = \"sw\"\nrate = \"1Gbit\"\ndelay = \"1ms\"\n\n", i, i
            printf "[[link]]\nname = \"lb%d\"\na = \"sw\"\nb = \"b%d\"\nrate = \"1Gbit\"\ndelay = \"1ms\"\n\n", i, i
        }
        for (i = 0; i < n; i++) printf "[[flow]]\nid = \"f%d\"\nfrom = \"a%d\"\nto = \"b%d\"\n\n", i, i, i
    } else {
        printf "description = \"%d switches in a line, a host on each (scenarios/scale/gen.sh chain %d)\"\n\n", n, n
        print "[run]\nduration = \"10ms\"\nseed = 1\n"
        for (i = 0; i < n; i++) printf "[[node]]\nname = \"s%d\"\nkind = \"switch\"\n\n[[node]]\nname = \"h%d\"\n\n", i, i
        for (i = 0; i < n; i++) {
            printf "[[link]]\nname = \"h%d\"\na = \"h%d\"\nb = \"s%d\"\nrate = \"1Gbit\"\ndelay = \"10us\"\n\n", i, i, i
            if (i + 1 < n) printf "[[link]]\nname = \"s%d\"\na = \"s%d\"\nb = \"s%d\"\nrate = \"1Gbit\"\ndelay = \"10us\"\n\n", i, i, i + 1
        }
        for (i = 0; i < n; i++) printf "[[flow]]\nid = \"f%d\"\nfrom = \"h%d\"\nto = \"h%d\"\n\n", i, i, (i + int(n / 2)) % n
    }
}'
