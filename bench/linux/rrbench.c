/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rrbench: a small TCP request/response benchmark (netperf TCP_RR / TCP_CRR style).
 *
 *   rrbench server [-p PORT] [-t THREADS]
 *       Echo server: every byte read on a connection is written back. THREADS
 *       epoll loops (default 2), each with its own SO_REUSEPORT listener.
 *   rrbench rr|crr -H HOST [-p PORT] [-s SIZE] [-n SESSIONS] [-T SECS] [-m TAG]
 *       SESSIONS client processes (session i pinned to CPU i mod ncpu), each:
 *         rr:  one persistent connection; write SIZE bytes, read SIZE bytes back, repeat
 *         crr: connect, write SIZE bytes, read SIZE bytes, close, repeat
 *       for SECS seconds (default 3) after all sessions are ready (rr: connected).
 *       With -m TAG it prints "BENCH-BEGIN TAG" when the sessions start and
 *       "BENCH-END TAG rate=R" when they are done (R = transactions/s), else
 *       "rrbench: mode=... size=... sessions=... secs=... trans=... rate=...".
 *       Exit 1 (and "BENCH-END TAG rate=ERR reason") on any error.
 *
 * Build: gcc -static -O2 -pthread -o rrbench rrbench.c
 */
#define _GNU_SOURCE
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <poll.h>

static int port = 6000;

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* ---------------------------------------------------------------- server */

static void set_nodelay(int fd)
{
	int one = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

static int write_all(int fd, const char *p, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, p, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN) {
				struct pollfd pf = { .fd = fd, .events = POLLOUT };
				poll(&pf, 1, 1000);
				continue;
			}
			return -1;
		}
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

static void *server_loop(void *arg)
{
	(void)arg;
	int one = 1;
	int ls = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
	if (ls < 0) {
		perror("rrbench: socket");
		exit(1);
	}
	setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	setsockopt(ls, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one));
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };
	if (bind(ls, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(ls, 1024) < 0) {
		perror("rrbench: bind/listen");
		exit(1);
	}
	int ep = epoll_create1(0);
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = ls };
	epoll_ctl(ep, EPOLL_CTL_ADD, ls, &ev);
	static __thread char buf[65536];
	struct epoll_event evs[64];
	for (;;) {
		int n = epoll_wait(ep, evs, 64, -1);
		for (int i = 0; i < n; i++) {
			int fd = evs[i].data.fd;
			if (fd == ls) {
				for (;;) {
					int c = accept4(ls, NULL, NULL, SOCK_NONBLOCK);
					if (c < 0)
						break;
					set_nodelay(c);
					struct epoll_event ce = { .events = EPOLLIN, .data.fd = c };
					epoll_ctl(ep, EPOLL_CTL_ADD, c, &ce);
				}
				continue;
			}
			ssize_t r = read(fd, buf, sizeof(buf));
			if (r > 0) {
				if (write_all(fd, buf, (size_t)r) == 0)
					continue;
			} else if (r < 0 && (errno == EAGAIN || errno == EINTR)) {
				continue;
			}
			epoll_ctl(ep, EPOLL_CTL_DEL, fd, NULL);
			close(fd);
		}
	}
	return NULL;
}

static int server(int threads)
{
	signal(SIGPIPE, SIG_IGN);
	pthread_t t;
	for (int i = 1; i < threads; i++)
		pthread_create(&t, NULL, server_loop, NULL);
	server_loop(NULL);
	return 0;
}

/* ---------------------------------------------------------------- client */

static struct sockaddr_in peer;

static int do_connect(char *err, size_t errlen)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0) {
		snprintf(err, errlen, "socket: %s", strerror(errno));
		return -1;
	}
	set_nodelay(fd);
	if (connect(fd, (struct sockaddr *)&peer, sizeof(peer)) < 0) {
		snprintf(err, errlen, "connect: %s", strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

/* One transaction on fd: SIZE bytes out, SIZE bytes back. */
static int transact(int fd, char *buf, size_t size, char *err, size_t errlen)
{
	if (write_all(fd, buf, size) < 0) {
		snprintf(err, errlen, "write: %s", strerror(errno));
		return -1;
	}
	size_t got = 0;
	while (got < size) {
		ssize_t r = read(fd, buf + got, size - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			snprintf(err, errlen, "read: %s", r < 0 ? strerror(errno) : "connection closed");
			return -1;
		}
		got += (size_t)r;
	}
	return 0;
}

struct result {
	int64_t trans;		/* transactions, or -1 on error */
	char err[112];
};

/* A session (child process): ready byte on rfd, wait for EOF on gofd, run, result on resfd. */
static void session(int idx, const char *mode, size_t size, double secs, int rfd, int gofd, int resfd)
{
	struct result res = { 0 };
	char *buf = calloc(1, size ? size : 1);
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	if (ncpu > 0) {
		cpu_set_t set;
		CPU_ZERO(&set);
		CPU_SET(idx % ncpu, &set);
		sched_setaffinity(0, sizeof(set), &set);
	}
	int crr = strcmp(mode, "crr") == 0;
	int fd = -1;
	if (!crr && (fd = do_connect(res.err, sizeof(res.err))) < 0)
		res.trans = -1;
	char c = 1;
	if (write(rfd, &c, 1) != 1)
		_exit(1);
	while (read(gofd, &c, 1) < 0 && errno == EINTR)	/* EOF: go */
		;
	double end = now() + secs;
	while (res.trans >= 0 && now() < end) {
		if (crr && (fd = do_connect(res.err, sizeof(res.err))) < 0) {
			res.trans = -1;
			break;
		}
		if (transact(fd, buf, size, res.err, sizeof(res.err)) < 0) {
			res.trans = -1;
			break;
		}
		if (crr) {
			close(fd);
			fd = -1;
		}
		if (now() <= end)
			res.trans++;
	}
	if (write(resfd, &res, sizeof(res)) != sizeof(res))
		_exit(1);
	_exit(0);
}

static int client(const char *mode, const char *host, size_t size, int sessions, double secs, const char *tag)
{
	signal(SIGPIPE, SIG_IGN);
	peer.sin_family = AF_INET;
	peer.sin_port = htons(port);
	if (inet_pton(AF_INET, host, &peer.sin_addr) != 1) {
		fprintf(stderr, "rrbench: bad host %s (IPv4 address)\n", host);
		return 2;
	}
	int ready[2], go[2], res[2];
	if (pipe(ready) || pipe(go) || pipe(res)) {
		perror("rrbench: pipe");
		return 1;
	}
	for (int i = 0; i < sessions; i++) {
		pid_t p = fork();
		if (p < 0) {
			perror("rrbench: fork");
			return 1;
		}
		if (p == 0) {
			close(ready[0]);
			close(go[1]);
			close(res[0]);
			session(i, mode, size, secs, ready[1], go[0], res[1]);
		}
	}
	close(ready[1]);
	close(go[0]);
	close(res[1]);
	char c;
	for (int i = 0; i < sessions; i++)
		if (read(ready[0], &c, 1) != 1)
			break;
	if (tag) {
		printf("BENCH-BEGIN %s\n", tag);
		fflush(stdout);
	}
	double t0 = now();
	close(go[1]);		/* all sessions start */
	int64_t total = 0;
	int bad = 0;
	char err[160] = "";
	struct result r;
	for (int i = 0; i < sessions; i++) {
		size_t got = 0;
		while (got < sizeof(r)) {
			ssize_t n = read(res[0], (char *)&r + got, sizeof(r) - got);
			if (n <= 0)
				break;
			got += (size_t)n;
		}
		if (got != sizeof(r)) {
			bad++;
			snprintf(err, sizeof(err), "a session died");
			continue;
		}
		if (r.trans < 0) {
			bad++;
			snprintf(err, sizeof(err), "%s", r.err);
		} else {
			total += r.trans;
		}
	}
	double el = now() - t0;
	while (wait(NULL) > 0)
		;
	if (el < secs)
		el = secs;
	double rate = total / secs;
	if (bad) {
		if (tag)
			printf("BENCH-END %s rate=ERR %d/%d sessions failed: %s\n", tag, bad, sessions, err);
		else
			fprintf(stderr, "rrbench: %d/%d sessions failed: %s\n", bad, sessions, err);
		return 1;
	}
	if (tag)
		printf("BENCH-END %s rate=%.1f\n", tag, rate);
	else
		printf("rrbench: mode=%s size=%zu sessions=%d secs=%.2f trans=%lld rate=%.1f\n",
		       mode, size, sessions, el, (long long)total, rate);
	return 0;
}

static void usage(void)
{
	fprintf(stderr, "usage: rrbench server [-p PORT] [-t THREADS]\n"
		"       rrbench rr|crr -H HOST [-p PORT] [-s SIZE] [-n SESSIONS] [-T SECS] [-m TAG]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	if (argc < 2)
		usage();
	const char *mode = argv[1];
	const char *host = NULL, *tag = NULL;
	int threads = 2, sessions = 1;
	long size = 1;
	double secs = 3;
	int o;
	optind = 2;
	while ((o = getopt(argc, argv, "p:t:H:s:n:T:m:")) != -1) {
		switch (o) {
		case 'p': port = atoi(optarg); break;
		case 't': threads = atoi(optarg); break;
		case 'H': host = optarg; break;
		case 's': size = atol(optarg); break;
		case 'n': sessions = atoi(optarg); break;
		case 'T': secs = atof(optarg); break;
		case 'm': tag = optarg; break;
		default: usage();
		}
	}
	if (strcmp(mode, "server") == 0)
		return server(threads < 1 ? 1 : threads);
	if ((strcmp(mode, "rr") && strcmp(mode, "crr")) || !host || size < 1 || size > 65536 ||
	    sessions < 1 || sessions > 1000 || secs <= 0)
		usage();
	return client(mode, host, (size_t)size, sessions, secs, tag);
}
