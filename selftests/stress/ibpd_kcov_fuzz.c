// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Copyright (c) 2026 The ibpd authors.
 *
 * A coverage-guided uverbs fuzzer, syzkaller's loop in miniature: each
 * structure-aware call (ibpd_fuzz.h) runs with KCOV tracing the PCs its
 * ioctl reaches; the PCs inside ib_core/ib_uverbs and ibpd become edges
 * (pairs of consecutive PCs, hashed into a bitmap), and a call that sets a
 * new edge joins the corpus. Guided, most calls are mutations of corpus
 * calls; blind, every call is new. Both run on a file with PDs and MRs of
 * their own, whose handles the calls use.
 *
 *   ibpd_kcov_fuzz [-m guided|blind|compare] [-t SECONDS] [-s SEED]
 *                  [-c CORPUS_IN] [-C]
 *
 * compare (the default) runs blind, then guided, each for SECONDS from
 * nothing, and reports the edges each reached over time; the guided
 * corpus is then replayed alone on new files, to see that it holds what
 * guidance found. With -c, whichever of the two reached more goes on for
 * SECONDS: guided from the corpus kept by earlier runs (a file of calls)
 * and this run's, or blind. With -m guided, -c is where it starts. -C
 * prints the last guided corpus as
 * "IBPD-KCOV-CORPUS <hex>" lines (the VM's disk is not the host's: the
 * runner keeps them). The ranges come from IBPD_KCOV_CORE ("START-END,...",
 * hex: the text of ib_core and ib_uverbs, scripts/tests/ibpd_check/kcov.py) and from the
 * ibpd module's sections; kselftest TAP.
 */

#include <elf.h>
#include <getopt.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "kselftest.h"
#include "ibpd_fuzz.h"

#define KCOV_INIT_TRACE _IOR('c', 1, unsigned long)
#define KCOV_ENABLE _IO('c', 100)
#define KCOV_DISABLE _IO('c', 101)
#define KCOV_TRACE_PC 0

#define COVER_WORDS (256 * 1024)
#define EDGE_BITS 22
#define MAX_RANGES 16
#define MAX_CORPUS 8192

struct range {
	uint64_t start, end;
	const char *what;
};

static struct range ranges[MAX_RANGES];
static int nranges;

static uint64_t *cover;
static int kcov_fd;

/* the calls destroy what they find: a fresh file each FILE_CALLS calls */
#define FILE_CALLS 5000

struct run {
	uint8_t *edges;		/* bitmap, 1 << EDGE_BITS bits */
	unsigned long nedges, npcs, calls, kept;
	unsigned long edges_in[MAX_RANGES];
	struct fuzz_call *corpus;
	/* the file each corpus call ran on: the how manieth since the start */
	unsigned long *file;
	unsigned long ncorpus;
};

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static int in_range(uint64_t pc)
{
	int i;

	for (i = 0; i < nranges; i++)
		if (pc >= ranges[i].start && pc < ranges[i].end)
			return i;
	return -1;
}

static void add_range(uint64_t start, uint64_t end, const char *what)
{
	if (nranges < MAX_RANGES && start < end)
		ranges[nranges++] = (struct range){ start, end, what };
}

/*
 * The executable sections of the ibpd module: their sizes from the module
 * file (IBPD_KO), their addresses from /sys/module/ibpd/sections.
 */
static int module_ranges(const char *ko)
{
	Elf64_Ehdr *eh;
	Elf64_Shdr *sh;
	const char *names;
	void *map;
	size_t len;
	int fd, i, n = 0;

	fd = open(ko, O_RDONLY);
	if (fd < 0)
		return -1;
	len = lseek(fd, 0, SEEK_END);
	map = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (map == MAP_FAILED)
		return -1;
	eh = map;
	sh = (Elf64_Shdr *)((char *)map + eh->e_shoff);
	names = (char *)map + sh[eh->e_shstrndx].sh_offset;
	for (i = 0; i < eh->e_shnum; i++) {
		char path[300];
		unsigned long long addr;
		FILE *f;

		if (!(sh[i].sh_flags & SHF_EXECINSTR) || !sh[i].sh_size)
			continue;
		snprintf(path, sizeof(path), "/sys/module/ibpd/sections/%s",
			 names + sh[i].sh_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fscanf(f, "%llx", &addr) == 1 && addr) {
			add_range(addr, addr + sh[i].sh_size, "ibpd");
			n++;
		}
		fclose(f);
	}
	munmap(map, len);
	return n;
}

/*
 * One call under KCOV: the PCs it reached in the ranges, as edges. Returns
 * how many edges were new.
 */
static unsigned long traced(struct fuzz_ctx *f, int fd, struct fuzz_call *c,
			    struct run *r, int *err)
{
	uint64_t prev = 0, n, i;
	unsigned long fresh = 0;

	__atomic_store_n(&cover[0], 0, __ATOMIC_RELAXED);
	*err = fuzz_exec(f, fd, c);
	n = __atomic_load_n(&cover[0], __ATOMIC_RELAXED);
	if (n > COVER_WORDS - 1)
		n = COVER_WORDS - 1;
	for (i = 0; i < n; i++) {
		uint64_t pc = cover[i + 1], h;
		int k = in_range(pc);

		if (k < 0)
			continue;
		/* an edge: this PC after the one before it */
		h = (pc ^ (prev << 1)) * 0x9e3779b97f4a7c15ULL;
		h >>= 64 - EDGE_BITS;
		prev = pc;
		if (r->edges[h / 8] & (1 << (h % 8)))
			continue;
		r->edges[h / 8] |= 1 << (h % 8);
		r->nedges++;
		r->edges_in[k]++;
		fresh++;
	}
	r->calls++;
	return fresh;
}

/*
 * The file the calls go to, with PDs and MRs for their handles: its fd, or
 * exits.
 */
static int setup_file(struct fuzz_ctx *f)
{
	int fd = test_open(test_dev()), i, err;

	if (fd < 0)
		ksft_exit_fail_msg("open %s: %s\n", test_dev(), strerror(-fd));
	for (i = 0; i < 3; i++) {
		err = test_pd_alloc(fd, &f->handles[2 * i], NULL, NULL);
		if (!err)
			err = test_mr_reg(fd, f->handles[2 * i], f->scratch,
					  4096, 1, &f->handles[2 * i + 1], NULL);
		if (err)
			ksft_exit_fail_msg("PD and MR on %s: %s\n", test_dev(),
					   strerror(err));
	}
	for (i = 6; i < FUZZ_HANDLES; i++)
		f->handles[i] = i - 6;
	return fd;
}

/* A fuzzer's context: its scratch buffer and its file (setup_file). */
static int fuzz_start(struct fuzz_ctx *f)
{
	f->scratch = mmap(NULL, FUZZ_SCRATCH, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (f->scratch == MAP_FAILED)
		ksft_exit_fail_msg("mmap: %s\n", strerror(errno));
	return setup_file(f);
}

static void fuzz_end(struct fuzz_ctx *f, int fd)
{
	close(fd);
	munmap(f->scratch, FUZZ_SCRATCH);
}

/* c, the call that made r->calls (1-based): kept, with the file it ran on */
static void corpus_add(struct run *r, const struct fuzz_call *c)
{
	unsigned long i = r->ncorpus < MAX_CORPUS ? r->ncorpus++ :
			  (unsigned long)rand() % MAX_CORPUS;

	r->corpus[i] = *c;
	r->file[i] = r->calls ? (r->calls - 1) / FILE_CALLS : 0;
	r->kept++;
}

static int corpus_load(struct run *r, const char *path)
{
	struct fuzz_call c;
	FILE *f = fopen(path, "r");
	int n = 0;

	if (!f)
		return -1;
	while (fread(&c, sizeof(c), 1, f) == 1 && r->ncorpus < MAX_CORPUS) {
		r->corpus[r->ncorpus++] = c;
		n++;
	}
	fclose(f);
	return n;
}

static void corpus_print(const struct run *r)
{
	unsigned long i;
	size_t j;

	for (i = 0; i < r->ncorpus; i++) {
		const uint8_t *b = (const uint8_t *)&r->corpus[i];

		printf("IBPD-KCOV-CORPUS ");
		for (j = 0; j < sizeof(r->corpus[i]); j++)
			printf("%02x", b[j]);
		printf("\n");
	}
}

/*
 * Fuzzes for secs seconds, guided or not; prints the edges reached every
 * secs/10 seconds.
 */
static void fuzz(struct run *r, bool guided, int secs, unsigned int seed)
{
	struct fuzz_ctx f = { .seed = seed };
	struct fuzz_call c;
	double t0 = now(), next = t0;
	int fd, err;

	fd = fuzz_start(&f);
	/* replay the seed corpus: its coverage is where guidance starts */
	for (unsigned long i = 0; guided && i < r->ncorpus; i++)
		traced(&f, fd, &r->corpus[i], r, &err);
	while (now() - t0 < secs) {
		if (guided && r->ncorpus && fuzz_rnd(&f) % 8) {
			int k = 1 + fuzz_rnd(&f) % 3;

			c = r->corpus[fuzz_rnd(&f) % r->ncorpus];
			while (k--)
				fuzz_mutate(&f, &c);
		} else {
			fuzz_gen(&f, &c);
		}
		if (traced(&f, fd, &c, r, &err) && guided)
			corpus_add(r, &c);
		if (!err)
			fuzz_close_event_fds();
		if (r->calls % FILE_CALLS == 0) {
			close(fd);
			fd = setup_file(&f);
		}
		if (now() >= next) {
			ksft_print_msg("kcov: %s %3.0f s: %lu edges, %lu calls, corpus %lu\n",
				       guided ? "guided" : "blind", now() - t0,
				       r->nedges, r->calls, r->ncorpus);
			next += secs / 10.0;
		}
	}
	fuzz_end(&f, fd);
}

/*
 * Replays the corpus of g, and nothing else, on new files: a fresh one
 * where g's run had taken one, as a call that found its edges on a fresh
 * file may find none on one an earlier call (a destroy of what it needs)
 * has emptied.
 */
static void replay_corpus(struct run *r, const struct run *g,
			  unsigned int seed)
{
	struct fuzz_ctx f = { .seed = seed };
	unsigned long i;
	int fd, err;

	fd = fuzz_start(&f);
	for (i = 0; i < g->ncorpus; i++) {
		if (i && g->file[i] != g->file[i - 1]) {
			close(fd);
			fd = setup_file(&f);
		}
		traced(&f, fd, &g->corpus[i], r, &err);
		if (!err)
			fuzz_close_event_fds();
	}
	fuzz_end(&f, fd);
}

static struct run *run_new(void)
{
	struct run *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->edges = calloc(1, 1 << (EDGE_BITS - 3));
	r->corpus = calloc(MAX_CORPUS, sizeof(*r->corpus));
	r->file = calloc(MAX_CORPUS, sizeof(*r->file));
	return r->edges && r->corpus && r->file ? r : NULL;
}

static void report(const char *mode, const struct run *r)
{
	unsigned long core = 0, ibpd = 0;
	int i;

	for (i = 0; i < nranges; i++) {
		if (!strcmp(ranges[i].what, "ibpd"))
			ibpd += r->edges_in[i];
		else
			core += r->edges_in[i];
	}
	ksft_print_msg("%s: %lu calls, %lu edges (%lu in ib_core/ib_uverbs, %lu in ibpd), corpus %lu\n",
		       mode, r->calls, r->nedges, core, ibpd, r->ncorpus);
}

int main(int argc, char **argv)
{
	const char *mode = "compare", *corpus_in = NULL, *core, *ko, *p;
	unsigned int seed = time(NULL);
	struct run *blind = NULL, *guided = NULL, *cont = NULL, *last = NULL;
	struct run *replay = NULL;
	bool keep_guided = true;
	unsigned long long s, e;
	bool dump = false;
	int secs = 30, opt;

	while ((opt = getopt(argc, argv, "m:t:s:c:C")) != -1) {
		switch (opt) {
		case 'm':
			mode = optarg;
			break;
		case 't':
			secs = atoi(optarg);
			break;
		case 's':
			seed = strtoul(optarg, NULL, 0);
			break;
		case 'c':
			corpus_in = optarg;
			break;
		case 'C':
			dump = true;
			break;
		default:
			fprintf(stderr,
				"usage: %s [-m guided|blind|compare] [-t SECONDS] [-s SEED] [-c CORPUS] [-C]\n",
				argv[0]);
			return 2;
		}
	}
	srand(seed);
	ksft_print_header();
	kcov_fd = open("/sys/kernel/debug/kcov", O_RDWR);
	if (kcov_fd < 0)
		ksft_exit_skip("no /sys/kernel/debug/kcov (CONFIG_KCOV)\n");
	core = getenv("IBPD_KCOV_CORE");
	for (p = core; p && sscanf(p, "%llx-%llx", &s, &e) == 2;
	     p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
		add_range(s, e, "core");
	ko = getenv("IBPD_KO");
	if (!ko || module_ranges(ko) <= 0)
		ksft_exit_skip("no ibpd module sections (IBPD_KO)\n");
	if (ioctl(kcov_fd, KCOV_INIT_TRACE, COVER_WORDS))
		ksft_exit_fail_msg("KCOV_INIT_TRACE: %s\n", strerror(errno));
	cover = mmap(NULL, COVER_WORDS * sizeof(*cover),
		     PROT_READ | PROT_WRITE, MAP_SHARED, kcov_fd, 0);
	if (cover == MAP_FAILED)
		ksft_exit_fail_msg("mmap kcov: %s\n", strerror(errno));
	if (ioctl(kcov_fd, KCOV_ENABLE, KCOV_TRACE_PC))
		ksft_exit_fail_msg("KCOV_ENABLE: %s\n", strerror(errno));
	ksft_print_msg("kcov: %s, %d s, seed %u, %d ranges of text (core: %s)\n",
		       mode, secs, seed, nranges, core ? core : "not given");

	if (!strcmp(mode, "blind") || !strcmp(mode, "compare")) {
		blind = run_new();
		if (!blind)
			ksft_exit_fail_msg("out of memory\n");
		fuzz(blind, false, secs, seed);
		report("blind", blind);
	}
	if (!strcmp(mode, "guided") || !strcmp(mode, "compare")) {
		guided = run_new();
		if (!guided)
			ksft_exit_fail_msg("out of memory\n");
		if (corpus_in && !blind)
			ksft_print_msg("corpus: %d calls from %s\n",
				       corpus_load(guided, corpus_in),
				       corpus_in);
		fuzz(guided, true, secs, seed);
		report("guided", guided);
		last = guided;
	}
	/* the corpus alone, replayed on new files: what guidance kept */
	if (guided) {
		replay = run_new();
		if (!replay)
			ksft_exit_fail_msg("out of memory\n");
		replay_corpus(replay, guided, seed);
	}
	/*
	 * Whichever reached more goes on: guided from the corpus kept by
	 * earlier runs and this one's, or blind (and the kept corpus stays
	 * as it was).
	 */
	if (blind && guided && corpus_in) {
		keep_guided = guided->nedges >= blind->nedges;
		cont = run_new();
		if (!cont)
			ksft_exit_fail_msg("out of memory\n");
		if (keep_guided) {
			ksft_print_msg("corpus: %d calls from %s\n",
				       corpus_load(cont, corpus_in), corpus_in);
			for (unsigned long i = 0; i < guided->ncorpus; i++)
				corpus_add(cont, &guided->corpus[i]);
			cont->kept = 0;
		}
		fuzz(cont, keep_guided, secs, seed + 1);
		report(keep_guided ? "guided from the kept corpus" : "blind again",
		       cont);
		last = keep_guided ? cont : NULL;
	}
	if (dump && last)
		corpus_print(last);
	ioctl(kcov_fd, KCOV_DISABLE, 0);

	if (blind && guided)
		ksft_print_msg("kcov: in %d s each, guided reached %lu edges, blind %lu (%+.0f%%): %s goes on\n",
			       secs, guided->nedges, blind->nedges,
			       blind->nedges ? 100.0 * guided->nedges /
					       blind->nedges - 100 : 0,
			       guided->nedges >= blind->nedges ? "guided" : "blind");
	ksft_set_plan(!!blind + 2 * !!guided + !!cont);
	if (blind)
		ksft_test_result(blind->nedges > 0, "blind: %lu edges\n",
				 blind->nedges);
	if (guided) {
		ksft_test_result(guided->nedges > 0 && guided->kept > 0,
				 "guided: %lu edges, %lu calls kept\n",
				 guided->nedges, guided->kept);
		/* each kept call found an edge: replayed, most come back */
		ksft_test_result(replay->nedges * 4 >= guided->nedges * 3,
				 "the corpus alone, replayed on new files, reaches %lu of the %lu edges (3/4 or more)\n",
				 replay->nedges, guided->nedges);
	}
	if (cont)
		ksft_test_result(cont->nedges > 0, "%s: %lu edges\n",
				 keep_guided ? "guided from the kept corpus" :
					       "blind again",
				 cont->nedges);
	ksft_finished();
}
