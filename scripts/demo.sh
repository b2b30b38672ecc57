#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The README's main job: boot the bundled test guest with a 4-queue
# virtio-net device on a multiqueue tap, pass traffic both ways from the
# host (ping, then UDP echo over many flows so every queue carries some),
# and print minivmm's per-queue table. Everything happens in a network
# namespace made here and removed on exit.
set -euo pipefail
BUILD=${BUILD:-build}
MINIVMM=$BUILD/minivmm
GUEST=$BUILD/testguest/testguest.elf
NETPEER=$BUILD/tools/netpeer
QUEUES=${QUEUES:-4}
NS=minivmm-demo-$$

cleanup() {
	ip netns pids "$NS" 2>/dev/null | xargs -r kill 2>/dev/null || true
	ip netns del "$NS" 2>/dev/null || true
}
trap cleanup EXIT

ip netns add "$NS"
ip -n "$NS" link set lo up
# A persistent multiqueue tap with the host's address on it; minivmm opens
# one queue of it per queue pair.
ip -n "$NS" tuntap add mvmtap0 mode tap multi_queue
ip -n "$NS" addr add 10.0.0.1/24 dev mvmtap0
ip -n "$NS" link set mvmtap0 up

echo "== minivmm --cpus $QUEUES --net tap=mvmtap0,queues=$QUEUES --stats (test guest: net-echo)"
ip netns exec "$NS" "$MINIVMM" --kernel "$GUEST" --cpus "$QUEUES" \
	--net "tap=mvmtap0,queues=$QUEUES" --stats \
	--cmdline "test=net-echo queues=$QUEUES secs=60" < /dev/null &
vm=$!

# The guest answers once its driver is up (a few ms): wait for that.
for _ in $(seq 50); do
	ip netns exec "$NS" ping -c 1 -W 0.2 10.0.0.2 > /dev/null 2>&1 && break
done
echo "== host: ping 10.0.0.2"
ip netns exec "$NS" ping -c 5 -i 0.2 10.0.0.2 | tail -2
echo "== host: UDP echo, 20000 datagrams of 60-1514 bytes over 64 flows"
ip netns exec "$NS" "$NETPEER" echo-check --dst 10.0.0.2 --port 5001 --count 20000 \
	--sizes 60-1514 --flows 64 --wait-ms 5000 | grep -E '^(sent|received|lost|corrupt|rate_pps|result)='
ip netns exec "$NS" "$NETPEER" stop --dst 10.0.0.2 --port 5001 > /dev/null
wait "$vm"
