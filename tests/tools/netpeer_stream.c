/* SPDX-License-Identifier: Apache-2.0 */
/* netpeer count (receive and check sequence numbers per flow), send
 * (sequence-numbered datagrams at a given rate) and stop. */
#include "netpeer.h"
#include "udp_flows.h"

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define BATCH     64
#define RX_BUF    2048
#define NS_PER_MS 1000000ull
#define NS_PER_S  1000000000ull
#define BIG_RCVBUF (64 << 20)

static int poll_ms(uint64_t now, uint64_t until)
{
	return until <= now ? 0 : (int)((until - now + NS_PER_MS - 1) / NS_PER_MS);
}

static double per_sec(uint64_t v, uint64_t ns)
{
	return ns ? (double)v * 1e9 / (double)ns : 0;
}

/* ---- count -------------------------------------------------------------- */

struct counter {
	struct udpf_flow *flows;
	unsigned nflows;
	uint64_t received, bad, frame_bytes;
	uint64_t t_first, t_last;
	const char *stopped;
	struct mmsghdr msgs[BATCH];
	struct iovec iov[BATCH];
	uint8_t buf[BATCH][RX_BUF];
};

static void counter_accept(struct counter *c, const uint8_t *p, size_t len, bool trunc)
{
	struct udpf_hdr h;

	if (udpf_is_stop(p, len)) {
		c->stopped = "stop";
		return;
	}
	c->t_last = udpf_now_ns();
	if (!c->t_first)
		c->t_first = c->t_last;
	if (trunc || !udpf_parse(p, len, &h) || h.flow >= c->nflows) {
		c->bad++;
		return;
	}
	/* Senders fill the whole payload with the pattern: a datagram whose
	 * bytes were damaged is counted, but its seq stays missing. */
	if (udpf_check(p, len, h.flow, h.seq) != 0) {
		c->flows[h.flow].corrupt++;
		return;
	}
	int r = udpf_flow_record(&c->flows[h.flow], h.seq);
	if (r < 0) {
		c->bad++;
		return;
	}
	c->received += (uint64_t)r;
	c->frame_bytes += len + UDPF_FRAME_OVERHEAD;
}

/* Receive everything queued on fd. Returns 0 or -errno. */
static int counter_drain(struct counter *c, int fd)
{
	for (;;) {
		for (unsigned i = 0; i < BATCH; i++) {
			c->iov[i] = (struct iovec){ c->buf[i], RX_BUF };
			c->msgs[i].msg_hdr = (struct msghdr){ .msg_iov = &c->iov[i], .msg_iovlen = 1 };
		}
		int n = recvmmsg(fd, c->msgs, BATCH, MSG_DONTWAIT, NULL);
		if (n < 0)
			return errno == EAGAIN ? 0 : -errno;
		for (int i = 0; i < n; i++)
			counter_accept(c, c->buf[i], c->msgs[i].msg_len,
				       c->msgs[i].msg_hdr.msg_flags & MSG_TRUNC);
		if (n < BATCH || c->stopped)
			return 0;
	}
}

static int counter_loop(struct counter *c, const struct np_opts *o, int fd)
{
	uint64_t deadline = udpf_now_ns() + o->timeout_ms * NS_PER_MS;

	for (;;) {
		uint64_t now = udpf_now_ns(), until = deadline;

		if (c->stopped)
			return 0;
		if (o->expect && c->received >= o->expect) {
			c->stopped = "expect";
			return 0;
		}
		if (now >= deadline) {
			c->stopped = "timeout";
			return 0;
		}
		if (c->t_first) {
			uint64_t idle_end = c->t_last + o->idle_ms * NS_PER_MS;
			if (now >= idle_end) {
				c->stopped = "idle";
				return 0;
			}
			if (idle_end < until)
				until = idle_end;
		}
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		if (poll(&pfd, 1, poll_ms(now, until)) < 0 && errno != EINTR)
			return -errno;
		int err = counter_drain(c, fd);
		if (err < 0)
			return err;
	}
}

static const char *counter_verdict(const struct counter *c, const struct np_opts *o,
				   uint64_t gaps, uint64_t dups, uint64_t corrupt,
				   char *reason, size_t size)
{
	if (corrupt)
		snprintf(reason, size, "%" PRIu64 " corrupt datagrams", corrupt);
	else if (gaps)
		snprintf(reason, size, "%" PRIu64 " missing sequence numbers", gaps);
	else if (o->expect && c->received != o->expect)
		snprintf(reason, size, "received %" PRIu64 " of %" PRIu64 " expected datagrams",
			 c->received, o->expect);
	else if (dups)
		snprintf(reason, size, "%" PRIu64 " duplicate datagrams", dups);
	else if (c->bad)
		snprintf(reason, size, "%" PRIu64 " malformed datagrams or unknown flows", c->bad);
	else if (!c->received)
		snprintf(reason, size, "nothing received");
	else
		return NULL;
	return reason;
}

static int counter_report(struct counter *c, const struct np_opts *o)
{
	struct np_report rep;
	uint64_t gaps = 0, dups = 0, reordered = 0, corrupt = 0, seen = 0;
	uint64_t ns = c->t_last - c->t_first;
	char reason[160];

	for (unsigned f = 0; f < c->nflows; f++) {
		gaps += udpf_flow_gaps(&c->flows[f]);
		dups += c->flows[f].duplicates;
		reordered += c->flows[f].reordered;
		corrupt += c->flows[f].corrupt;
		seen += c->flows[f].seen || c->flows[f].corrupt;
	}
	const char *verdict = counter_verdict(c, o, gaps, dups, corrupt, reason, sizeof(reason));
	for (unsigned f = 0; !verdict && f < o->flows; f++)
		if (!c->flows[f].seen) {
			snprintf(reason, sizeof(reason), "flow %u received nothing", f);
			verdict = reason;
		}

	report_begin(&rep, stdout, o->json);
	report_u64(&rep, "received", c->received);
	report_u64(&rep, "gaps", gaps);
	report_u64(&rep, "duplicates", dups);
	report_u64(&rep, "reordered", reordered);
	report_u64(&rep, "corrupt", corrupt);
	report_u64(&rep, "bad", c->bad);
	report_u64(&rep, "flows_seen", seen);
	for (unsigned f = 0; f < c->nflows; f++) {
		const struct udpf_flow *fl = &c->flows[f];
		if (!fl->seen && !fl->corrupt && f >= o->flows)
			continue;
		report_flow_u64(&rep, f, "received", fl->received);
		report_flow_u64(&rep, f, "gaps", udpf_flow_gaps(fl));
		report_flow_u64(&rep, f, "duplicates", fl->duplicates);
		report_flow_u64(&rep, f, "reordered", fl->reordered);
		report_flow_u64(&rep, f, "corrupt", fl->corrupt);
		report_flow_u64(&rep, f, "max_seq", fl->seen ? fl->max_seq : 0);
	}
	report_str(&rep, "stopped", c->stopped);
	report_u64(&rep, "elapsed_ms", ns / NS_PER_MS);
	report_f64(&rep, "rate_pps", per_sec(c->received, ns));
	report_f64(&rep, "rate_mbps", per_sec(c->frame_bytes * 8, ns) / 1e6);
	return report_end(&rep, verdict);
}

int np_count(const struct np_opts *o)
{
	struct counter *c = calloc(1, sizeof(*c));
	int fd, err, rc;

	if (!c)
		return np_sys_error("count", -ENOMEM);
	c->nflows = o->flows ? o->flows : NP_MAX_FLOWS;
	c->flows = calloc(c->nflows, sizeof(*c->flows));
	fd = udpf_socket(o->port, NULL, BIG_RCVBUF, true);
	if (!c->flows || fd < 0) {
		rc = np_sys_error("count: socket", fd < 0 ? fd : -ENOMEM);
		goto out;
	}
	if (o->ready_file && (err = np_write_ready(o->ready_file, o->port)) < 0) {
		rc = np_sys_error("count: ready file", err);
		goto out;
	}
	err = counter_loop(c, o, fd);
	rc = err < 0 ? np_sys_error("count", err) : counter_report(c, o);
out:
	if (fd >= 0)
		close(fd);
	for (unsigned f = 0; c->flows && f < c->nflows; f++)
		udpf_flow_free(&c->flows[f]);
	free(c->flows);
	free(c);
	return rc;
}

/* ---- send --------------------------------------------------------------- */

struct sender {
	int *fds;
	uint64_t *next_seq;           /* per flow */
	uint64_t sent, frame_bytes, net_errors, retries, deadline;
	uint64_t end;                 /* --duration-ms: stop sending at this time (0: never) */
	bool timed_out, ended;
	struct mmsghdr msgs[BATCH];
	struct iovec iov[BATCH];
	uint8_t buf[BATCH][UDPF_PAYLOAD_MAX];
};

static uint64_t flow_quota(const struct np_opts *o, unsigned f)
{
	return o->count / o->flows + (f < o->count % o->flows);
}

/* Sends msgs[0..n) on fd (non-blocking), waiting while the kernel pushes
 * back, until the deadline. Returns how many went out, or -errno. */
static int sender_push(struct sender *s, int fd, unsigned n)
{
	unsigned done = 0;

	while (done < n) {
		int m = sendmmsg(fd, s->msgs + done, n - done, 0);
		uint64_t now = udpf_now_ns();

		if (m > 0) {
			done += (unsigned)m;
			continue;
		}
		if (s->end && now >= s->end) {
			s->ended = true;   /* the time is up while the socket is full */
			break;
		}
		if (now >= s->deadline) {
			s->timed_out = true;
			break;
		}
		if (errno == EAGAIN || errno == EINTR) {
			/* Socket buffer full (e.g. frames queued for an unresolved neighbour). */
			struct pollfd pfd = { .fd = fd, .events = POLLOUT };
			s->retries++;
			(void)poll(&pfd, 1, poll_ms(now, s->deadline) < 100 ? poll_ms(now, s->deadline) : 100);
		} else if (errno == ENOBUFS) {
			s->retries++;
			udpf_sleep_until_ns(now + 20000);
		} else if (errno == ECONNREFUSED || errno == EHOSTUNREACH || errno == EHOSTDOWN) {
			s->net_errors++;   /* an earlier datagram's ICMP error; this one was not sent */
		} else {
			return -errno;
		}
	}
	return (int)done;
}

/* One batch of up to `max` datagrams of flow f. Returns 0 or -errno. */
static int sender_batch(struct sender *s, const struct np_opts *o, unsigned f, unsigned max)
{
	uint64_t left = flow_quota(o, f) - s->next_seq[f];
	unsigned n = left < max ? (unsigned)left : max;

	for (unsigned i = 0; i < n; i++) {
		uint64_t seq = s->next_seq[f] + i;
		size_t len = np_frame_size(o, seq * o->flows + f) - UDPF_FRAME_OVERHEAD;

		seq += o->first_seq;

		udpf_fill(s->buf[i], len, (uint16_t)f, seq);
		s->iov[i] = (struct iovec){ s->buf[i], len };
		s->msgs[i].msg_hdr = (struct msghdr){ .msg_iov = &s->iov[i], .msg_iovlen = 1 };
	}
	int done = sender_push(s, s->fds[f], n);
	if (done < 0)
		return done;
	for (int i = 0; i < done; i++)
		s->frame_bytes += s->iov[i].iov_len + UDPF_FRAME_OVERHEAD;
	s->next_seq[f] += (unsigned)done;
	s->sent += (unsigned)done;
	return 0;
}

static int sender_loop(struct sender *s, const struct np_opts *o, uint64_t t0)
{
	/* Batches of about 1 ms worth keep the pacing smooth. */
	uint64_t per_ms = o->rate / 1000;
	unsigned max = !o->rate ? BATCH : per_ms < 1 ? 1 : per_ms > BATCH ? BATCH : (unsigned)per_ms;

	while (s->sent < o->count && !s->timed_out && !s->ended) {
		for (unsigned f = 0; f < o->flows && s->sent < o->count && !s->timed_out && !s->ended; f++) {
			if (s->end && udpf_now_ns() >= s->end) {
				s->ended = true;
				break;
			}
			if (o->rate)
				udpf_sleep_until_ns(t0 + s->sent * NS_PER_S / o->rate);
			int err = sender_batch(s, o, f, max);
			if (err < 0)
				return err;
		}
	}
	return 0;
}

static int sender_report(struct sender *s, const struct np_opts *o, uint64_t ns)
{
	struct np_report rep;
	char reason[128];

	report_begin(&rep, stdout, o->json);
	report_u64(&rep, "sent", s->sent);
	report_u64(&rep, "unsent", o->duration_ms ? 0 : o->count - s->sent);
	report_u64(&rep, "flows", o->flows);
	for (unsigned f = 0; f < o->flows; f++)
		report_flow_u64(&rep, f, "sent", s->next_seq[f]);
	report_u64(&rep, "net_errors", s->net_errors);
	report_u64(&rep, "retries", s->retries);
	report_u64(&rep, "elapsed_ms", ns / NS_PER_MS);
	report_f64(&rep, "rate_pps", per_sec(s->sent, ns));
	report_f64(&rep, "rate_mbps", per_sec(s->frame_bytes * 8, ns) / 1e6);
	report_str(&rep, "stopped", s->timed_out ? "timeout" : s->ended ? "duration" : "count");
	snprintf(reason, sizeof(reason), "timed out after %" PRIu64 " ms with %" PRIu64
		 " datagrams unsent", o->timeout_ms, o->count - s->sent);
	return report_end(&rep, s->timed_out ? reason : NULL);
}

int np_send(const struct np_opts *o)
{
	struct sender *s = calloc(1, sizeof(*s));
	int err = -ENOMEM, rc;
	uint64_t t0, ns;

	if (!s)
		return np_sys_error("send", err);
	s->fds = malloc(o->flows * sizeof(*s->fds));
	for (unsigned f = 0; s->fds && f < o->flows; f++)
		s->fds[f] = -1;
	s->next_seq = calloc(o->flows, sizeof(*s->next_seq));
	if (!s->fds || !s->next_seq)
		goto fail;
	for (unsigned f = 0; f < o->flows; f++)
		if ((s->fds[f] = err = udpf_socket(0, &o->dst, 0, true)) < 0)
			goto fail;
	t0 = udpf_now_ns();
	s->end = o->duration_ms ? t0 + o->duration_ms * NS_PER_MS : 0;
	s->deadline = t0 + (o->duration_ms + o->timeout_ms) * NS_PER_MS;
	if ((err = sender_loop(s, o, t0)) < 0)
		goto fail;
	ns = udpf_now_ns() - t0;
	if (o->stop) {
		/* Let the receiver drain its queues before it sees the stop. */
		udpf_sleep_until_ns(udpf_now_ns() + 100 * NS_PER_MS);
		if ((err = udpf_send_stop(&o->dst, 3)) < 0)
			goto fail;
	}
	rc = sender_report(s, o, ns);
	goto out;
fail:
	rc = np_sys_error("send", err);
out:
	for (unsigned f = 0; s->fds && f < o->flows; f++)
		if (s->fds[f] >= 0)
			close(s->fds[f]);
	free(s->fds);
	free(s->next_seq);
	free(s);
	return rc;
}

/* ---- stop --------------------------------------------------------------- */

int np_stop(const struct np_opts *o)
{
	int err = udpf_send_stop(&o->dst, o->repeat);

	if (err < 0)
		return np_sys_error("stop", err);
	return NP_EXIT_OK;
}
