/* SPDX-License-Identifier: Apache-2.0 */
/* netpeer echo-check (send, get every datagram back, compare byte for byte)
 * and echo-server (the peer to test it against). */
#include "netpeer.h"
#include "udp_flows.h"

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/udp.h>
#include <sys/socket.h>
#include <unistd.h>

#define RX_BATCH 32
#define RX_BUF   2048
#define NS_PER_MS 1000000ull

enum { ST_UNSENT, ST_INFLIGHT, ST_RECEIVED, ST_EXPIRED };

struct rx_ring {
	struct mmsghdr msgs[RX_BATCH];
	struct iovec iov[RX_BATCH];
	struct sockaddr_in names[RX_BATCH];
	uint8_t buf[RX_BATCH][RX_BUF];
};

struct echo_flow {
	uint64_t sent, received, max_seq;
	bool seen;
};

struct echo_run {
	const struct np_opts *o;
	struct pollfd *pfds;         /* one connected socket per flow */
	struct echo_flow *flows;
	uint8_t *status;             /* ST_* per datagram n = seq * flows + flow */
	uint64_t *sent_at;           /* ns, per datagram */
	struct rx_ring *rx;
	uint64_t next;               /* datagrams sent */
	uint64_t oldest;             /* no datagram below this is in flight */
	uint64_t outstanding;        /* in flight (not echoed, not expired) */
	uint64_t received, corrupt, duplicates, reordered, late, net_errors, rx_bytes;
	uint64_t t_start, t_last;
	uint8_t tx[UDPF_PAYLOAD_MAX * NP_MAX_GSO];
};

/* Errors a connected UDP socket reports for an earlier datagram (ICMP or a
 * failed neighbour lookup): the current datagram was not sent; retry later. */
static bool transient_net_error(int err)
{
	return err == ECONNREFUSED || err == EHOSTUNREACH || err == ENETUNREACH ||
	       err == EHOSTDOWN || err == EAGAIN || err == ENOBUFS;
}

static void rx_ring_init(struct rx_ring *rx)
{
	memset(rx->msgs, 0, sizeof(rx->msgs));
	for (unsigned i = 0; i < RX_BATCH; i++) {
		rx->iov[i] = (struct iovec){ rx->buf[i], RX_BUF };
		rx->msgs[i].msg_hdr.msg_iov = &rx->iov[i];
		rx->msgs[i].msg_hdr.msg_iovlen = 1;
		rx->msgs[i].msg_hdr.msg_name = &rx->names[i];
		rx->msgs[i].msg_hdr.msg_namelen = sizeof(rx->names[i]);
	}
}

/* recvmmsg without blocking; returns the count, 0 when empty, -errno. */
static int rx_ring_recv(struct rx_ring *rx, int fd)
{
	for (unsigned i = 0; i < RX_BATCH; i++)
		rx->msgs[i].msg_hdr.msg_namelen = sizeof(rx->names[i]);
	int n = recvmmsg(fd, rx->msgs, RX_BATCH, MSG_DONTWAIT, NULL);
	if (n < 0)
		return errno == EAGAIN ? 0 : -errno;
	return n;
}

static void echo_free(struct echo_run *r)
{
	if (r->pfds)
		for (unsigned f = 0; f < r->o->flows; f++)
			if (r->pfds[f].fd >= 0)
				close(r->pfds[f].fd);
	free(r->pfds);
	free(r->flows);
	free(r->status);
	free(r->sent_at);
	free(r->rx);
}

static int echo_open(struct echo_run *r, const struct np_opts *o)
{
	unsigned k = o->flows;

	memset(r, 0, offsetof(struct echo_run, tx));
	r->o = o;
	r->pfds = calloc(k, sizeof(*r->pfds));
	r->flows = calloc(k, sizeof(*r->flows));
	r->status = calloc(o->count, 1);
	r->sent_at = calloc(o->count, sizeof(*r->sent_at));
	r->rx = malloc(sizeof(*r->rx));
	if (!r->pfds || !r->flows || !r->status || !r->sent_at || !r->rx)
		return -ENOMEM;
	rx_ring_init(r->rx);
	for (unsigned f = 0; f < k; f++)
		r->pfds[f] = (struct pollfd){ .fd = -1, .events = POLLIN };
	for (unsigned f = 0; f < k; f++) {
		r->pfds[f].fd = udpf_socket(0, &o->dst, 4 << 20, true);
		if (r->pfds[f].fd < 0)
			return r->pfds[f].fd;
	}
	return 0;
}

/* Probe from flow 0's socket every 100 ms until an echo of a probe comes
 * back. Returns 0 when the peer answered, 1 on timeout, -errno. */
static int echo_wait_peer(struct echo_run *r, uint64_t *waited_ms)
{
	uint64_t t0 = udpf_now_ns(), end = t0 + r->o->wait_ms * NS_PER_MS;
	int fd = r->pfds[0].fd;
	struct udpf_hdr h;

	for (uint64_t p = 0; udpf_now_ns() < end; p++) {
		udpf_fill(r->tx, UDPF_FRAME_MIN - UDPF_FRAME_OVERHEAD, UDPF_PROBE_FLOW, p);
		if (send(fd, r->tx, UDPF_FRAME_MIN - UDPF_FRAME_OVERHEAD, 0) < 0 &&
		    !transient_net_error(errno))
			return -errno;
		uint64_t slot_end = udpf_now_ns() + 100 * NS_PER_MS;
		for (uint64_t now; (now = udpf_now_ns()) < slot_end && now < end;) {
			struct pollfd pfd = { .fd = fd, .events = POLLIN };
			(void)poll(&pfd, 1, (int)((slot_end - now) / NS_PER_MS) + 1);
			int n = rx_ring_recv(r->rx, fd);
			for (int i = 0; i < n; i++) {
				if (udpf_parse(r->rx->buf[i], r->rx->msgs[i].msg_len, &h) &&
				    h.flow == UDPF_PROBE_FLOW) {
					*waited_ms = (udpf_now_ns() - t0) / NS_PER_MS;
					return 0;
				}
			}
			if (n < 0 && !transient_net_error(-n))
				return n;
		}
	}
	return 1;
}

/* Classify one datagram that came back on flow f's socket. */
static void echo_accept(struct echo_run *r, unsigned f, const uint8_t *p, size_t len, bool trunc)
{
	const struct np_opts *o = r->o;
	struct echo_flow *fl = &r->flows[f];
	struct udpf_hdr h;

	if (udpf_is_stop(p, len))
		return;
	if (udpf_parse(p, len, &h) && h.flow == UDPF_PROBE_FLOW)
		return;   /* a late answer to a readiness probe */
	r->t_last = udpf_now_ns();
	/* A valid echo names this socket's flow and a datagram already sent,
	 * has that datagram's length and exactly its bytes. */
	if (trunc || !udpf_parse(p, len, &h) || h.flow != f || h.seq >= o->count) {
		r->corrupt++;
		return;
	}
	uint64_t n = h.seq * o->flows + f;
	if (n >= r->next || len != np_frame_size(o, n) - UDPF_FRAME_OVERHEAD ||
	    udpf_check(p, len, (uint16_t)f, h.seq) != 0) {
		r->corrupt++;
		return;
	}
	switch (r->status[n]) {
	case ST_RECEIVED:
		r->duplicates++;
		return;
	case ST_INFLIGHT:
		r->outstanding--;
		break;
	case ST_EXPIRED:
		r->late++;
		break;
	}
	r->status[n] = ST_RECEIVED;
	r->received++;
	r->rx_bytes += len + UDPF_FRAME_OVERHEAD;
	fl->received++;
	if (fl->seen && h.seq < fl->max_seq) {
		r->reordered++;
	} else {
		fl->max_seq = h.seq;
		fl->seen = true;
	}
}

static int echo_drain(struct echo_run *r, unsigned f)
{
	for (;;) {
		int n = rx_ring_recv(r->rx, r->pfds[f].fd);
		if (n < 0 && transient_net_error(-n)) {
			r->net_errors++;
			continue;
		}
		if (n <= 0)
			return n;
		for (int i = 0; i < n; i++)
			echo_accept(r, f, r->rx->buf[i], r->rx->msgs[i].msg_len,
				    r->rx->msgs[i].msg_hdr.msg_flags & MSG_TRUNC);
	}
}

/* Datagrams in flight longer than --loss-ms free their window slot. */
static void echo_expire(struct echo_run *r, uint64_t now)
{
	while (r->oldest < r->next) {
		uint64_t n = r->oldest;
		if (r->status[n] == ST_INFLIGHT) {
			if (now - r->sent_at[n] < r->o->loss_ms * NS_PER_MS)
				return;
			r->status[n] = ST_EXPIRED;
			r->outstanding--;
		}
		r->oldest++;
	}
}

/* --gso K: K consecutive datagrams (all of flow 0, equal sizes) in one send
 * with UDP_SEGMENT, so the kernel builds one GSO frame and the receiver's
 * side (a veth, a packet socket) sees it whole. Returns how many were sent,
 * 0 if the socket pushed back, or -errno. */
static int echo_send_gso(struct echo_run *r, unsigned k)
{
	size_t len = np_frame_size(r->o, r->next) - UDPF_FRAME_OVERHEAD;
	for (unsigned j = 0; j < k; j++)
		udpf_fill(r->tx + j * len, len, 0, r->next + j);
	char cbuf[CMSG_SPACE(sizeof(uint16_t))];
	memset(cbuf, 0, sizeof(cbuf));
	struct iovec iov = { .iov_base = r->tx, .iov_len = k * len };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
			    .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *c = CMSG_FIRSTHDR(&m);
	c->cmsg_level = SOL_UDP;
	c->cmsg_type = UDP_SEGMENT;
	c->cmsg_len = CMSG_LEN(sizeof(uint16_t));
	uint16_t seg = (uint16_t)len;
	memcpy(CMSG_DATA(c), &seg, sizeof(seg));
	if (sendmsg(r->pfds[0].fd, &m, MSG_DONTWAIT) < 0) {
		if (!transient_net_error(errno))
			return -errno;
		r->net_errors += errno != EAGAIN && errno != ENOBUFS;
		return 0;
	}
	uint64_t now = udpf_now_ns();
	for (unsigned j = 0; j < k; j++) {
		r->sent_at[r->next] = now;
		r->status[r->next] = ST_INFLIGHT;
		r->flows[0].sent++;
		r->outstanding++;
		r->next++;
	}
	return (int)k;
}

/* Send until the window is full. Returns 0, 1 if the socket pushed back,
 * or -errno. */
static int echo_fill_window(struct echo_run *r)
{
	const struct np_opts *o = r->o;

	while (o->gso > 1 && r->outstanding < o->window && r->next < o->count) {
		uint64_t k = o->gso;
		if (k > o->window - r->outstanding)
			k = o->window - r->outstanding;
		if (k > o->count - r->next)
			k = o->count - r->next;
		int sent = echo_send_gso(r, (unsigned)k);
		if (sent <= 0)
			return sent < 0 ? sent : 1;
	}
	while (r->outstanding < o->window && r->next < o->count) {
		uint64_t n = r->next;
		unsigned f = (unsigned)(n % o->flows);
		size_t len = np_frame_size(o, n) - UDPF_FRAME_OVERHEAD;

		udpf_fill(r->tx, len, (uint16_t)f, n / o->flows);
		if (send(r->pfds[f].fd, r->tx, len, MSG_DONTWAIT) < 0) {
			if (!transient_net_error(errno))
				return -errno;
			r->net_errors += errno != EAGAIN && errno != ENOBUFS;
			return 1;
		}
		r->sent_at[n] = udpf_now_ns();
		r->status[n] = ST_INFLIGHT;
		r->flows[f].sent++;
		r->outstanding++;
		r->next++;
	}
	return 0;
}

static int poll_ms(uint64_t now, uint64_t until)
{
	return until <= now ? 0 : (int)((until - now + NS_PER_MS - 1) / NS_PER_MS);
}

/* Runs until every datagram is echoed or expired, or the deadline (sets
 * *timed_out). Returns 0 or -errno. */
static int echo_loop(struct echo_run *r, bool *timed_out)
{
	const struct np_opts *o = r->o;
	uint64_t deadline = r->t_start + o->timeout_ms * NS_PER_MS;

	for (;;) {
		uint64_t now = udpf_now_ns();
		echo_expire(r, now);
		int blocked = echo_fill_window(r);
		if (blocked < 0)
			return blocked;
		if (r->next == o->count && r->outstanding == 0)
			return 0;
		if (now >= deadline) {
			*timed_out = true;
			return 0;
		}
		uint64_t until = deadline;
		if (blocked)
			until = now + NS_PER_MS;
		else if (r->oldest < r->next && r->sent_at[r->oldest] + o->loss_ms * NS_PER_MS < until)
			until = r->sent_at[r->oldest] + o->loss_ms * NS_PER_MS;
		if (poll(r->pfds, o->flows, poll_ms(now, until)) < 0 && errno != EINTR)
			return -errno;
		for (unsigned f = 0; f < o->flows; f++) {
			if (!r->pfds[f].revents)
				continue;
			int err = echo_drain(r, f);
			if (err < 0)
				return err;
		}
	}
}

static int echo_report(struct echo_run *r, bool timed_out, uint64_t waited_ms)
{
	const struct np_opts *o = r->o;
	struct np_report rep;
	char reason[160] = "";
	uint64_t lost = r->next - r->received;
	uint64_t end = r->t_last > r->t_start ? r->t_last : udpf_now_ns();
	double secs = (double)(end - r->t_start) / 1e9;

	report_begin(&rep, stdout, o->json);
	report_u64(&rep, "sent", r->next);
	report_u64(&rep, "received", r->received);
	report_u64(&rep, "lost", lost);
	report_u64(&rep, "corrupt", r->corrupt);
	report_u64(&rep, "duplicates", r->duplicates);
	report_u64(&rep, "reordered", r->reordered);
	report_u64(&rep, "late", r->late);
	report_u64(&rep, "unsent", o->count - r->next);
	report_u64(&rep, "net_errors", r->net_errors);
	report_u64(&rep, "flows", o->flows);
	report_u64(&rep, "window", o->window);
	for (unsigned f = 0; f < o->flows; f++) {
		report_flow_u64(&rep, f, "sent", r->flows[f].sent);
		report_flow_u64(&rep, f, "received", r->flows[f].received);
		report_flow_u64(&rep, f, "lost", r->flows[f].sent - r->flows[f].received);
	}
	if (o->wait_ms)
		report_u64(&rep, "waited_ms", waited_ms);
	report_u64(&rep, "elapsed_ms", (end - r->t_start) / NS_PER_MS);
	report_f64(&rep, "rate_pps", secs > 0 ? (double)r->received / secs : 0);
	report_f64(&rep, "rate_mbps", secs > 0 ? (double)r->rx_bytes * 8 / secs / 1e6 : 0);

	if (timed_out && r->next < o->count)
		snprintf(reason, sizeof(reason), "timed out after %" PRIu64 " ms with %" PRIu64
			 " datagrams unsent", o->timeout_ms, o->count - r->next);
	else if (r->corrupt)
		snprintf(reason, sizeof(reason), "%" PRIu64 " corrupt echoes", r->corrupt);
	else if (r->duplicates)
		snprintf(reason, sizeof(reason), "%" PRIu64 " duplicate echoes", r->duplicates);
	else if (lost && !o->allow_loss)
		snprintf(reason, sizeof(reason), "%" PRIu64 " of %" PRIu64 " datagrams lost",
			 lost, r->next);
	return report_end(&rep, reason[0] ? reason : NULL);
}

int np_echo_check(const struct np_opts *o)
{
	struct echo_run *r = malloc(sizeof(*r));
	bool timed_out = false;
	uint64_t waited_ms = 0;
	int err, rc;

	if (!r)
		return np_sys_error("echo-check", -ENOMEM);
	err = echo_open(r, o);
	if (err < 0) {
		rc = np_sys_error("echo-check: setup", err);
		goto out;
	}
	if (o->wait_ms) {
		err = echo_wait_peer(r, &waited_ms);
		if (err < 0) {
			rc = np_sys_error("echo-check: probe", err);
			goto out;
		}
		if (err > 0) {
			struct np_report rep;
			char reason[80];

			snprintf(reason, sizeof(reason), "no answer to probes within %" PRIu64 " ms",
				 o->wait_ms);
			report_begin(&rep, stdout, o->json);
			report_u64(&rep, "sent", 0);
			rc = report_end(&rep, reason);
			goto out;
		}
	}
	r->t_start = udpf_now_ns();
	err = echo_loop(r, &timed_out);
	if (err < 0) {
		rc = np_sys_error("echo-check", err);
		goto out;
	}
	if (o->stop) {
		err = udpf_send_stop(&o->dst, 3);
		if (err < 0) {
			rc = np_sys_error("echo-check: stop", err);
			goto out;
		}
	}
	rc = echo_report(r, timed_out, waited_ms);
out:
	echo_free(r);
	free(r);
	return rc;
}

/* ---- echo-server -------------------------------------------------------- */

struct echo_server {
	uint64_t received, echoed, dropped, corrupted, duplicated, send_errors;
	struct mmsghdr out[2 * RX_BATCH];
};

/* Send out[0..n) back, waiting when the socket pushes back. */
static int server_send(struct echo_server *s, int fd, unsigned n)
{
	unsigned done = 0;

	while (done < n) {
		int m = sendmmsg(fd, s->out + done, n - done, 0);
		if (m > 0) {
			done += (unsigned)m;
			s->echoed += (unsigned)m;
		} else if (errno == EAGAIN || errno == ENOBUFS) {
			struct pollfd pfd = { .fd = fd, .events = POLLOUT };
			(void)poll(&pfd, 1, 10);
		} else if (transient_net_error(errno)) {
			s->send_errors++;
			done++;   /* drop this one, its sender is gone */
		} else {
			return -errno;
		}
	}
	return 0;
}

/* Builds the replies for one received batch; sets *stop on a stop datagram. */
static unsigned server_batch(struct echo_server *s, const struct np_opts *o,
			     struct rx_ring *rx, int n, bool *stop)
{
	unsigned k = 0;

	for (int i = 0; i < n && !*stop; i++) {
		struct msghdr *h = &rx->msgs[i].msg_hdr;
		size_t len = rx->msgs[i].msg_len;

		if (udpf_is_stop(rx->buf[i], len)) {
			*stop = true;
			break;
		}
		s->received++;
		if (o->drop_every && s->received % o->drop_every == 0) {
			s->dropped++;
			continue;
		}
		if (o->corrupt_every && s->received % o->corrupt_every == 0 && len) {
			rx->buf[i][len / 2] ^= 0xff;
			s->corrupted++;
		}
		rx->iov[i].iov_len = len;
		unsigned copies = o->dup_every && s->received % o->dup_every == 0 ? 2 : 1;
		s->duplicated += copies - 1;
		for (unsigned c = 0; c < copies; c++)
			s->out[k++] = (struct mmsghdr){ .msg_hdr = {
				.msg_name = h->msg_name, .msg_namelen = h->msg_namelen,
				.msg_iov = &rx->iov[i], .msg_iovlen = 1 } };
	}
	return k;
}

int np_echo_server(const struct np_opts *o)
{
	struct echo_server s = { 0 };
	struct rx_ring *rx = malloc(sizeof(*rx));
	struct np_report rep;
	uint64_t deadline = udpf_now_ns() + o->timeout_ms * NS_PER_MS;
	bool stop = false;
	int fd, err = 0;

	if (!rx)
		return np_sys_error("echo-server", -ENOMEM);
	fd = udpf_socket(o->port, NULL, 64 << 20, true);
	if (fd < 0) {
		free(rx);
		return np_sys_error("echo-server: socket", fd);
	}
	if (o->ready_file && (err = np_write_ready(o->ready_file, o->port)) < 0)
		goto out;
	while (!stop && udpf_now_ns() < deadline) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		if (poll(&pfd, 1, poll_ms(udpf_now_ns(), deadline)) < 0 && errno != EINTR) {
			err = -errno;
			break;
		}
		rx_ring_init(rx);
		int n = rx_ring_recv(rx, fd);
		if (n < 0 && !transient_net_error(-n)) {
			err = n;
			break;
		}
		unsigned k = server_batch(&s, o, rx, n, &stop);
		if ((err = server_send(&s, fd, k)) < 0)
			break;
	}
out:
	close(fd);
	free(rx);
	if (err < 0)
		return np_sys_error("echo-server", err);
	report_begin(&rep, stdout, o->json);
	report_u64(&rep, "received", s.received);
	report_u64(&rep, "echoed", s.echoed);
	report_u64(&rep, "dropped", s.dropped);
	report_u64(&rep, "corrupted", s.corrupted);
	report_u64(&rep, "duplicated", s.duplicated);
	report_u64(&rep, "send_errors", s.send_errors);
	report_str(&rep, "stopped", stop ? "stop" : "timeout");
	return report_end(&rep, NULL);
}
