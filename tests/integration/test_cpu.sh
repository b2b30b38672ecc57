# SPDX-License-Identifier: Apache-2.0
# The CPU model as this host's KVM produces it: minivmm --cpuid-dump.
# (The per-vCPU APIC IDs are checked inside the guest by test=smp, see
# test_boot.sh.)

# cpuid_dump_check OUTFILE PYTHON: PYTHON sees e[(function, index)] =
# (eax, ebx, ecx, edx, flags) from the dump's entry lines, `text` the whole
# output, and calls check(condition, message).
cpuid_dump_check() {
	local out=$1 code=$2 msg
	msg=$(python3 - "$out" "$code" 2>&1 <<'PY'
import sys
text = open(sys.argv[1]).read()
e, errs = {}, []
for n, line in enumerate(text.splitlines(), 1):
    if line.startswith('#') or line.startswith('minivmm:'):
        continue
    f = line.split()
    if len(f) != 7:
        errs.append("line %d is not 'function index eax ebx ecx edx flags': %r" % (n, line))
        continue
    v = [int(x, 0) for x in f]
    if (v[0], v[1]) in e:
        errs.append("0x%x.%u twice" % (v[0], v[1]))
    e[(v[0], v[1])] = tuple(v[2:])
def check(cond, what):
    if not cond:
        errs.append(what)
check(len(e) > 20, "only %d entries" % len(e))
exec(sys.argv[2])
if errs:
    print("; ".join(errs[:5]))
    sys.exit(1)
PY
	) || { fail "--cpuid-dump: $msg"; return 1; }
}

t_cpuid_dump_guest_shows_the_model_and_why() {
	local out="$TMP_ROOT/cpuid-guest.out"
	run_vm "$out" --cpuid-dump --cpus 4
	expect_rc 0 "$out" && expect_line "^# minivmm --cpuid-dump=guest on Linux" "$out" &&
		expect_line "^# the CPUID of vCPU 0 of 4 " "$out" &&
		expect_line "^# changes from KVM_GET_SUPPORTED_CPUID" "$out" &&
		expect_line "^#   IA32_MTRR_DEF_TYPE \(0x2ff\): 0x0 -> 0x806 \(set\)" "$out" || return 1
	cpuid_dump_check "$out" '
check(e[(1, 0)][1] >> 24 == 0, "leaf 1 APIC ID of vCPU 0")
check(e[(1, 0)][2] & (1 << 31), "HYPERVISOR")
check(e[(0xb, 1)][1] & 0xffff == 4 and e[(0xb, 1)][2] == 0x201, "0xB core level for 4 vCPUs")
check((0x1f, 0) not in e, "leaf 0x1F dropped")
check(e[(0x40000000, 0)][1:4] == (0x4b4d564b, 0x564b4d56, 0x4d), "KVMKVMKVM")
brand = b"".join(x.to_bytes(4, "little") for f in (0x80000002, 0x80000003, 0x80000004) for x in e[(f, 0)][:4])
check(brand.strip(b"\0 "), "a brand string")
vendor = e[(0, 0)][1:4]
if vendor == (0x68747541, 0x444d4163, 0x69746e65):   # AuthenticAMD
    check(e[(0x80000008, 0)][2] & 0xf0ff == 0x2003, "0x80000008 ECX: ApicIdSize 2, NC 3")
    check((0x8000001e, 0) not in e or e[(0x8000001e, 0)][1] & 0xffff == 0, "0x8000001E core 0, one thread")
'
}

t_cpuid_dump_supported_is_kvms_list() {
	local out="$TMP_ROOT/cpuid-sup.out" guest="$TMP_ROOT/cpuid-g1.out"
	run_vm "$out" --cpuid-dump=supported
	expect_rc 0 "$out" && expect_line "^# KVM_GET_SUPPORTED_CPUID, unchanged" "$out" &&
		expect_no_line "^# changes from" "$out" || return 1
	cpuid_dump_check "$out" 'check((0, 0) in e and (0x80000000, 0) in e, "leaves 0 and 0x80000000")' || return 1
	run_vm "$guest" --cpuid-dump=guest
	expect_rc 0 "$guest" || return 1
	cmp -s <(grep -v '^#' "$out") <(grep -v '^#' "$guest") &&
		fail "the guest's CPUID is KVM's list unchanged"
	return 0
}

t_cpuid_dump_refuses_bad_values() {
	cli_refuses "--cpuid-dump: 'host' is not guest or supported" --cpuid-dump=host || return 1
	cli_refuses "--cpus: '65' is not a number" --cpuid-dump --cpus 65
}
