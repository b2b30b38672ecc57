# SPDX-License-Identifier: Apache-2.0
# The device tree: --dump-dtb decompiles with dtc and describes the machine;
# the PVH guest gets it as module 1 ("dtb") after the initrd; the test guest
# finds its virtio-net device through it, and through the cmdline words where
# there is none (QEMU microvm).

. tests/integration/netns.sh

# dts_props DTS: one line per property, "<node path> <name> = <value>;",
# so a check names the node it means.
dts_props() {
	python3 - "$1" <<'PY'
import re, sys
path = []
for line in open(sys.argv[1]):
    line = line.strip()
    if line.endswith("{"):
        name = line[:-1].strip()
        path.append("" if name == "/" else name)
    elif line == "};":
        path.pop()
    elif "=" in line or (line.endswith(";") and not line.startswith("/")):
        where = "/".join(path) or "/"
        print(where if where.startswith("/") else "/" + where, line)
PY
}

# expect_prop PROPS NODE PROPERTY-LINE: that exact property in that node.
expect_prop() {
	grep -Fxq -- "$2 $3" "$1" ||
		fail "no '$3' in $2; props there: $(grep -F -- "$2 " "$1" | tr '\n' '|')"
}

t_dtb_dump_decompiles_and_shows_the_machine() {
	netns_create NS || { fail "cannot create a network namespace"; return 1; }
	local dtb="$TMP_ROOT/machine.dtb" out="$TMP_ROOT/dump.out"
	local dts="$TMP_ROOT/machine.dts" props="$TMP_ROOT/machine.props"
	ip netns exec "$NS" timeout -k 5 30 "$MINIVMM" --kernel "$TESTGUEST" --cpus 4 --mem 4G \
		--net tap=d0 --net tap=d1,queues=2 --cmdline "test=hello" --dump-dtb "$dtb" \
		< /dev/null > "$out" 2>&1
	rc=$?
	expect_rc 0 "$out" || return 1
	# The guest never ran.
	expect_no_line "hello from minivmm|boot time" "$out" || return 1
	[ -s "$dtb" ] || { fail "no DTB written"; return 1; }
	dtc -I dtb -O dts -o "$dts" "$dtb" 2> "$TMP_ROOT/dtc.err" ||
		{ fail "dtc cannot decompile it: $(tr '\n' '|' < "$TMP_ROOT/dtc.err")"; return 1; }
	[ ! -s "$TMP_ROOT/dtc.err" ] || { fail "dtc warns: $(tr '\n' '|' < "$TMP_ROOT/dtc.err")"; return 1; }
	dts_props "$dts" > "$props" || { fail "cannot read the dts"; return 1; }

	expect_prop "$props" / 'compatible = "minivmm,x86-64";' || return 1
	expect_prop "$props" / 'interrupt-parent = <0x01>;' || return 1
	expect_prop "$props" /chosen \
		'bootargs = "test=hello virtio_mmio.device=4K@0xd0000000:5 virtio_mmio.device=4K@0xd0001000:6";' || return 1
	expect_prop "$props" /chosen 'stdout-path = "/isa/serial@i3f8";' || return 1
	grep -q '^/memreserve/[[:space:]]*0x000000000009fc00 0x0000000000060400;' "$dts" ||
		{ fail "no memreserve for the firmware area"; return 1; }
	# 4 GiB: 3 GiB below the hole, 1 GiB from 4 GiB.
	expect_prop "$props" /memory@0 'device_type = "memory";' || return 1
	expect_prop "$props" /memory@0 'reg = <0x00 0x00 0x00 0xc0000000>;' || return 1
	expect_prop "$props" /memory@100000000 'reg = <0x01 0x00 0x00 0x40000000>;' || return 1
	local i
	for i in 0 1 2 3; do
		expect_prop "$props" "/cpus/cpu@$i" 'device_type = "cpu";' || return 1
		expect_prop "$props" "/cpus/cpu@$i" "reg = <0x0$i>;" || return 1
	done
	[ "$(grep -c '^/cpus/cpu@[0-9a-f]* reg' "$props")" = 4 ] || { fail "not 4 CPUs"; return 1; }
	expect_prop "$props" /interrupt-controller@fec00000 'compatible = "intel,ce4100-ioapic";' || return 1
	expect_prop "$props" /interrupt-controller@fec00000 '#interrupt-cells = <0x02>;' || return 1
	expect_prop "$props" /interrupt-controller@fec00000 'phandle = <0x01>;' || return 1
	expect_prop "$props" /isa/serial@i3f8 'compatible = "ns16550a";' || return 1
	expect_prop "$props" /isa/serial@i3f8 'reg = <0x01 0x3f8 0x08>;' || return 1
	expect_prop "$props" /isa/serial@i3f8 'interrupts = <0x04 0x03>;' || return 1
	local k base
	for k in 0 1; do
		base=$(printf 'd000%d000' "$k")
		expect_prop "$props" "/virtio_mmio@$base" 'compatible = "virtio,mmio";' || return 1
		expect_prop "$props" "/virtio_mmio@$base" "reg = <0x00 0x$base 0x00 0x1000>;" || return 1
		expect_prop "$props" "/virtio_mmio@$base" "interrupts = <0x0$((5 + k)) 0x03>;" || return 1
	done
	[ "$(grep -c 'compatible = "virtio,mmio"' "$props")" = 2 ] || { fail "not exactly 2 virtio-mmio nodes"; return 1; }
	# The pvpanic register, after the last possible virtio-mmio window.
	expect_prop "$props" /pvpanic-mmio@d0008000 'compatible = "qemu,pvpanic-mmio";' || return 1
	expect_prop "$props" /pvpanic-mmio@d0008000 'reg = <0x00 0xd0008000 0x00 0x02>;' || return 1
	# The taps were minivmm's own: gone with it.
	ip -n "$NS" link show d0 > /dev/null 2>&1 && { fail "tap d0 outlived --dump-dtb"; return 1; }
	return 0
}

t_dtb_dump_refuses_bad_files() {
	cli_refuses "--dump-dtb: cannot create device tree file '/nonexistent/x.dtb': No such file or directory" \
		--kernel "$TESTGUEST" --dump-dtb /nonexistent/x.dtb || return 1
	cli_refuses "--dump-dtb: no file name" --kernel "$TESTGUEST" --dump-dtb '' || return 1
	cli_refuses "--dump-dtb needs a value" --kernel "$TESTGUEST" --dump-dtb || return 1
	cli_refuses "--kernel PATH is required" --dump-dtb "$TMP_ROOT/x.dtb"
}

# What a PVH guest sees: Linux takes module 0 as its initrd, so the DTB is
# module 1, after the initrd or after an empty module 0.
t_dtb_is_module_1_after_the_initrd() {
	local out="$TMP_ROOT/modules.out" initrd="$TMP_ROOT/initrd.bin" dtb="$TMP_ROOT/m.dtb" size
	head -c 4097 /dev/urandom > "$initrd"
	run_vm "$TMP_ROOT/m.dump" --kernel "$TESTGUEST" --cmdline "test=hello debug" --dump-dtb "$dtb" < /dev/null
	size=$(stat -c %s "$dtb")
	run_vm "$out" --kernel "$TESTGUEST" --initrd "$initrd" --cmdline "test=hello debug" < /dev/null
	expect_rc 0 "$out" || return 1
	expect_line "module 0 paddr 0x[0-9a-f]+ size 4097 name ''" "$out" || return 1
	expect_line "module 1 paddr 0x30000 size $size name 'dtb'" "$out" || return 1
	expect_no_line "module 2" "$out" || return 1
	run_vm "$out" --kernel "$TESTGUEST" --cmdline "test=hello debug" < /dev/null
	expect_rc 0 "$out" || return 1
	expect_line "module 0 paddr 0x0 size 0 name ''" "$out" || return 1
	expect_line "module 1 paddr 0x30000 size $size name 'dtb'" "$out"
}

t_dtb_guest_finds_virtio_net_through_dtb() {
	net_vm_start dtb-net "test=net-echo secs=30 debug" --net tap=t0 --net tap=t1 || return 1
	local res="$TMP_ROOT/dtb-ping.txt"
	ip netns exec "$NS" ping -c 5 -i 0.05 -W 1 10.0.0.2 > "$res" 2>&1
	ip netns exec "$NS" "$BUILD/tools/netpeer" stop --dst 10.0.0.2 --port 5001 > /dev/null 2>&1
	net_vm_wait
	expect_rc 0 "$OUT" || return 1
	expect_line "^testguest: virtio-mmio source dtb devices 2$" "$OUT" || return 1
	expect_line "virtio-mmio window 0 base 0xd0000000 size 0x1000 irq 5$" "$OUT" || return 1
	expect_line "virtio-mmio window 1 base 0xd0001000 size 0x1000 irq 6$" "$OUT" || return 1
	expect_line "virtio-net at 0xd0000000 irq 5 " "$OUT" || return 1
	expect_no_line "unusable" "$OUT" || return 1
	grep -q " 0% packet loss" "$res" || fail "ping through the DTB-found device: $(tail -2 "$res" | tr '\n' ' ')"
}

t_dtb_guest_with_no_devices_does_not_use_the_cmdline() {
	local out="$TMP_ROOT/nodev.out"
	# The DTB lists no device, so a cmdline word (here a bogus one) is not
	# looked at: the guest reports no device rather than a bad word.
	run_vm "$out" --kernel "$TESTGUEST" --cmdline "test=net-echo virtio_mmio.device=junk" < /dev/null
	expect_rc 65 "$out" || return 1
	expect_line "virtio-mmio source dtb devices 0" "$out" &&
		expect_no_line "bad virtio_mmio.device" "$out"
}

# QEMU microvm gives an x86 PVH guest no device tree: the guest must fall
# back to the virtio_mmio.device= words QEMU appends (acpi=off).
t_dtb_guest_falls_back_to_cmdline_under_qemu() {
	command -v qemu-system-x86_64 > /dev/null ||
		{ fail "qemu-system-x86_64 missing (scripts/install-deps.sh test)"; return 1; }
	netns_create NS || { fail "cannot create a network namespace"; return 1; }
	local out="$TMP_ROOT/qemu.out"
	ip netns exec "$NS" timeout -k 5 60 qemu-system-x86_64 \
		-M microvm,x-option-roms=off,rtc=off,acpi=off -enable-kvm -cpu host,-arch-capabilities \
		-m 256 -smp 1 -nodefaults -no-user-config -nographic -serial stdio \
		-device isa-debug-exit,iobase=0x501,iosize=2 -device i8042 -no-reboot \
		-global virtio-mmio.force-legacy=false \
		-netdev tap,id=n0,ifname=q0,script=no,downscript=no,vhost=off \
		-device virtio-net-device,netdev=n0 \
		-kernel "$TESTGUEST" -append "test=net-echo secs=1 debug" < /dev/null > "$out" 2>&1
	rc=$?
	expect_rc 0 "$out" || return 1
	expect_line "^testguest: virtio-mmio source cmdline devices [1-9][0-9]*$" "$out" || return 1
	expect_no_line "module [0-9]|source dtb" "$out" || return 1
	expect_line "virtio-net at 0x[0-9a-f]+ irq [0-9]+ " "$out" &&
		expect_line "net-echo done" "$out"
}
