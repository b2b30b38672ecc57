/* SPDX-License-Identifier: Apache-2.0 */
/* The --net option of the minivmm program: "tap=NAME,queues=4,cpus=2-5,..."
 * into a struct minivmm_net_config. Text only: ranges and how the fields
 * fit together are checked afterwards by minivmm_config_validate(), as for
 * every embedding program. */
#ifndef MINIVMM_VMM_NET_CONFIG_H
#define MINIVMM_VMM_NET_CONFIG_H

#include "minivmm.h"
#include "base/error.h"

#define NET_SYNTAX \
	"[tap[=NAME]|packet=IFACE|xdp=IFACE][,queues=N][,threads=auto|per-queue|M][,cpus=LIST]" \
	"[,mac=MAC][,mtu=N][,queue-size=N][,engine=uring|epoll][,poll-us=auto|N]" \
	"[,fixed-files=on|off][,fixed-buffers=on|off][,defer-taskrun=on|off]" \
	"[,fanout=hash|cpu|lb|qm][,rx=ring|recv][,qdisc-bypass=on|off][,xdp-zero-copy=on|off]" \
	"[,ip=ADDR/PREFIX|bridge=BR][,rx-bw=SIZE/MS[/BURST]][,tx-bw=SIZE/MS[/BURST]]" \
	"[,rx-ops=N/MS[/BURST]][,tx-ops=N/MS[/BURST]]"

/* Parse one --net value into *net (which starts from defaults). Refuses an
 * empty value, unknown keys, a key given twice, values that are not of the
 * key's kind (a number, a CPU list, a MAC ...). */
int net_config_parse(const char *spec, struct minivmm_net_config *net, struct vmm_err *err);

/* The name of the i-th key ("tap", "queues" ...), NULL past the last: for
 * the test that --help explains every one. */
const char *net_config_key_name(unsigned i);

int net_config_parse_mac(const char *text, unsigned char mac[6]);

/* Decimal unsigned, digits only, fitting in unsigned: 0 or -EINVAL/-ERANGE. */
int net_config_parse_number(const char *text, unsigned *value);

#endif
