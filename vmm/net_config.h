/* The --net option: "tap=NAME,queues=4,threads=per-queue,cpus=2-5,..." */
#ifndef MINIVMM_VMM_NET_CONFIG_H
#define MINIVMM_VMM_NET_CONFIG_H

#include "minivmm.h"
#include "base/error.h"

#define NET_SYNTAX \
	"[tap[=NAME]|packet=IFACE|xdp=IFACE][,queues=N][,threads=auto|per-queue|M][,cpus=LIST]" \
	"[,mac=MAC][,mtu=N][,queue-size=N][,engine=uring|epoll][,poll-us=auto|N]" \
	"[,fixed-files=on|off][,fixed-buffers=on|off][,defer-taskrun=on|off]" \
	"[,fanout=hash|cpu|lb|qm][,rx=ring|recv][,qdisc-bypass=on|off][,xdp-zero-copy=on|off]"

/* Parse one --net value into *net (which starts from defaults). */
int net_config_parse(const char *spec, struct minivmm_net_config *net, struct vmm_err *err);

/* Check the pieces fit together (threads <= queues, cpus count, ...). */
int net_config_check(const struct minivmm_net_config *net, struct vmm_err *err);

int net_config_parse_mac(const char *text, unsigned char mac[6]);

#endif
