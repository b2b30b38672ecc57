/* What a device may ask of the machine it sits in, without knowing the VM.
 *
 * Devices (serial, i8042, debug-exit, virtio) get one of these at creation:
 * they can ask the VM to stop with an exit status and log a line through the
 * embedding program's sink. Keeps devices/ free of vmm/vm.h. */
#ifndef MINIVMM_VMM_VM_EVENTS_H
#define MINIVMM_VMM_VM_EVENTS_H

struct vm_events {
	void *opaque;
	/* Stop the VM; the first request wins. reason is one line. */
	void (*request_stop)(void *opaque, int status, const char *reason);
	/* One line of information for the user (no trailing newline). */
	void (*log)(void *opaque, const char *line);
};

static inline void vm_events_stop(const struct vm_events *ev, int status, const char *reason)
{
	ev->request_stop(ev->opaque, status, reason);
}

static inline void vm_events_log(const struct vm_events *ev, const char *line)
{
	ev->log(ev->opaque, line);
}

#endif
