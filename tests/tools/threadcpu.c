/* SPDX-License-Identifier: Apache-2.0 */
/* threadcpu PID PREFIX OUTFILE: how much CPU the threads of PID whose name
 * starts with PREFIX (e.g. "net0-") use, to tell a spinning worker from an
 * idle one (tests/integration/hostile_lib.sh).
 *
 * Creates OUTFILE.ready once its signal handlers are in place, then reads
 * /proc/PID/task/<tid>/{comm,schedstat} (time on CPU in ns) every 20 ms.
 * SIGUSR1 starts the measured window (again); SIGTERM or SIGINT, or the end
 * of PID, ends it, and one line goes to OUTFILE:
 *
 *   window <s> cpu <s> util <cores> peak <cores> busiest <name> <s> threads <n>
 *
 * cpu: the sum over matching threads of their CPU time between the first
 * and the last sample that saw them (threads come and go when the device is
 * reset and its workers restarted). util = cpu / window. peak: the highest
 * use over any 200 ms stretch. busiest: the thread name with the most CPU
 * time (threads of one name added up). */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define PERIOD_NS   20000000ull
#define PEAK_NS     200000000ull
#define MAX_THREADS 256
#define MAX_SAMPLES 65536

struct thread {
	long tid;
	char name[24];
	unsigned long long first, last;     /* ns on CPU */
	int known;
};

static volatile sig_atomic_t stop, restart;

static void on_stop(int sig) { (void)sig; stop = 1; }
static void on_restart(int sig) { (void)sig; restart = 1; }

static unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

static int read_line(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "re");

	if (!f)
		return -1;
	if (!fgets(buf, (int)size, f)) {
		fclose(f);
		return -1;
	}
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

static struct thread *find(struct thread *t, unsigned *n, long tid)
{
	for (unsigned i = 0; i < *n; i++)
		if (t[i].tid == tid)
			return &t[i];
	if (*n == MAX_THREADS)
		return NULL;
	memset(&t[*n], 0, sizeof(t[*n]));
	t[*n].tid = tid;
	return &t[(*n)++];
}

/* One sample: -1 when the process is gone. *delta gets the CPU time the
 * matching threads seen in both this and the previous sample used since. */
static int sample(long pid, const char *prefix, struct thread *t, unsigned *n,
		  unsigned long long *delta)
{
	char path[96], comm[24], stat[128];
	struct dirent *de;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%ld/task", pid);
	d = opendir(path);
	if (!d)
		return -1;
	*delta = 0;
	while ((de = readdir(d))) {
		long tid = strtol(de->d_name, NULL, 10);
		unsigned long long ns;
		struct thread *th;

		if (tid <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%ld/task/%ld/comm", pid, tid);
		if (read_line(path, comm, sizeof(comm)) || strncmp(comm, prefix, strlen(prefix)))
			continue;
		snprintf(path, sizeof(path), "/proc/%ld/task/%ld/schedstat", pid, tid);
		if (read_line(path, stat, sizeof(stat)))
			continue;
		ns = strtoull(stat, NULL, 10);
		th = find(t, n, tid);
		if (!th)
			continue;
		if (!th->known) {
			memcpy(th->name, comm, sizeof(th->name));
			th->first = ns;
			th->known = 1;
		} else {
			*delta += ns - th->last;
		}
		th->last = ns;
	}
	closedir(d);
	return 0;
}

int main(int argc, char **argv)
{
	static struct thread t[MAX_THREADS];
	static unsigned long long at[MAX_SAMPLES], used[MAX_SAMPLES];
	unsigned n = 0, ns = 0;
	unsigned long long t0, t1, cpu = 0, busiest_cpu = 0, delta;
	double peak = 0;
	const char *busiest = "none";
	char ready[4096];
	struct sigaction sa;
	long pid;
	FILE *out;

	if (argc != 4) {
		fprintf(stderr, "usage: threadcpu PID PREFIX OUTFILE\n");
		return 2;
	}
	pid = strtol(argv[1], NULL, 10);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sa.sa_handler = on_restart;
	sigaction(SIGUSR1, &sa, NULL);
	snprintf(ready, sizeof(ready), "%s.ready", argv[3]);
	out = fopen(ready, "we");
	if (!out) {
		fprintf(stderr, "threadcpu: %s: %s\n", ready, strerror(errno));
		return 1;
	}
	fclose(out);

	t0 = t1 = now_ns();
	while (!stop) {
		if (restart) {
			restart = 0;
			n = ns = 0;
			t0 = now_ns();
		}
		if (sample(pid, argv[2], t, &n, &delta) < 0)
			break;
		t1 = now_ns();
		if (ns < MAX_SAMPLES) {
			at[ns] = t1;
			used[ns++] = delta;
		}
		struct timespec p = { 0, (long)PERIOD_NS };
		nanosleep(&p, NULL);
	}

	for (unsigned i = 0; i < n; i++) {
		unsigned long long c = t[i].last - t[i].first, same = 0;

		cpu += c;
		for (unsigned j = 0; j < n; j++)
			if (!strcmp(t[j].name, t[i].name))
				same += t[j].last - t[j].first;
		if (same > busiest_cpu) {
			busiest_cpu = same;
			busiest = t[i].name;
		}
	}
	/* The busiest stretch of at least 200 ms (or the whole window, if it
	 * is shorter): used[k] is what was used between at[k-1] and at[k]. */
	for (unsigned i = 1; i < ns; i++) {
		unsigned long long acc = 0;
		unsigned j = i;

		while (j < ns && (acc += used[j], at[j] - at[i - 1] < PEAK_NS))
			j++;
		if (j == ns) {
			if (i > 1)
				break;          /* shorter than 200 ms from here on */
			j = ns - 1;
		}
		if (at[j] > at[i - 1]) {
			double u = (double)acc / (double)(at[j] - at[i - 1]);

			if (u > peak)
				peak = u;
		}
	}
	out = fopen(argv[3], "we");
	if (!out) {
		fprintf(stderr, "threadcpu: %s: %s\n", argv[3], strerror(errno));
		return 1;
	}
	double window = (double)(t1 - t0) / 1e9;
	fprintf(out, "window %.3f cpu %.4f util %.3f peak %.3f busiest %s %.4f threads %u\n", window,
		(double)cpu / 1e9, window > 0 ? (double)cpu / 1e9 / window : 0.0, peak, busiest,
		(double)busiest_cpu / 1e9, n);
	fclose(out);
	return 0;
}
