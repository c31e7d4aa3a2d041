/* SPDX-License-Identifier: MIT */
/*
 * initiator/bench/bench_svg.c: the chart is well-formed, has one bar per path and workload in
 * each panel, and escapes text. With BENCH_SVG_OUT=FILE the chart is also written there.
 */
#define _GNU_SOURCE
#include <CUnit/Basic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench.h"
#include "ut.h"

static struct bench_opts g_opts;

static unsigned int count(const char *hay, const char *needle)
{
	unsigned int n = 0;

	for (const char *p = hay; (p = strstr(p, needle)); p++)
		n++;
	return n;
}

static struct bench_report *make_report(unsigned int ncells, bool with_target)
{
	static const struct bench_workload loads[] = {
		{ BENCH_RANDREAD, 4096, 32 },
		{ BENCH_RANDWRITE, 4096, 32 },
		{ BENCH_SEQREAD, 65536, 32 },
		{ BENCH_SEQWRITE, 131072, 1 },
	};
	struct bench_report *r = calloc(1, sizeof(*r));

	CU_ASSERT_PTR_NOT_NULL_FATAL(r);
	g_opts = (struct bench_opts){ .time_s = 1, .repeat = 1, .jobs = 1 };
	r->o = &g_opts;
	snprintf(r->host, sizeof(r->host), "Linux <test> & co, 2 CPUs");
	r->ncells = ncells;
	for (unsigned int i = 0; i < ncells; i++) {
		struct bench_cell *c = &r->cells[i];

		c->w = loads[i % 4];
		bench_cell_label(&c->w, c->label, sizeof(c->label));
		for (unsigned int p = 0; p < BENCH_NPATHS; p++) {
			struct bench_sample *s = &c->path[p].samples[0];

			c->path[p].ran = true;
			c->path[p].nsamples = 1;
			s->secs = 1;
			s->ios = 10000 * (i + 1) * (p ? 8 : 10) / 10;
			s->bytes = s->ios * c->w.bs;
			s->lat_avg_ns = 100000.0 * (p + 1);
			s->lat_p99_ns = 300000 * (p + 1);
			s->init_cpu_ns = 2000.0 * (double)s->ios;
			s->have_target = with_target;
			s->tgt_cpu_ns = 4000.0 * (double)s->ios * (p ? 1.2 : 1);
			bench_path_aggregate(&c->path[p], NULL);
		}
	}
	return r;
}

static char *render(struct bench_report *r)
{
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	CU_ASSERT_EQUAL(bench_svg_write(f, r), 0);
	fclose(f);
	return out;
}

static void test_structure(void)
{
	struct bench_report *r = make_report(4, true);
	char *svg = render(r);
	const char *out = getenv("BENCH_SVG_OUT");

	CU_ASSERT(strncmp(svg, "<?xml", 5) == 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(svg, "<svg xmlns=\"http://www.w3.org/2000/svg\""));
	CU_ASSERT(strcmp(svg + strlen(svg) - 7, "</svg>\n") == 0);
	CU_ASSERT_EQUAL(count(svg, "<text"), count(svg, "</text>"));
	/* legends: the two paths and the three series of the difference panel */
	CU_ASSERT_EQUAL(count(svg, "<rect x="), count(svg, "</rect>") + 5);
	/* the first panel: SCSI vs native per workload for IOPS, latency and target CPU */
	CU_ASSERT_PTR_NOT_NULL(strstr(svg, "SCSI vs native, % per workload"));
	CU_ASSERT_EQUAL(count(svg, "fill=\"#2f855a\"><title>") + count(svg, "fill=\"#2f855a\" "
									    "fill-opacity"),
			4);
	CU_ASSERT_EQUAL(count(svg, "fill=\"#805ad5\"><title>") + count(svg, "fill=\"#805ad5\" "
									    "fill-opacity"),
			4);
	CU_ASSERT_EQUAL(count(svg, "fill=\"#c05621\"><title>") + count(svg, "fill=\"#c05621\" "
									    "fill-opacity"),
			4);
	/* CPU panels on a log scale: QD1 and QD32 both readable */
	CU_ASSERT_PTR_NOT_NULL(strstr(svg, "Target CPU per I/O, us; dark inset: SCSI translation "
					   "(lower is better) (log scale)"));
	/* the caption: settings and what is known of the spread */
	CU_ASSERT_PTR_NOT_NULL(strstr(svg, "in-capsule data"));
	CU_ASSERT_PTR_NOT_NULL(strstr(svg, "FirstBurstLength"));
	/* four panels (IOPS, latency, target CPU, initiator CPU) x 4 workloads, per path */
	CU_ASSERT_EQUAL(count(svg, "fill=\"#2b6cb0\"><title>"), 16);
	CU_ASSERT_EQUAL(count(svg, "fill=\"#dd6b20\"><title>"), 16);
	/* the p99 ticks of the latency panel, one per bar */
	CU_ASSERT_EQUAL(count(svg, "class=\"marker\""), 8);
	/* the SCSI-vs-native label: 80% of the IOPS */
	CU_ASSERT_PTR_NOT_NULL(strstr(svg, ">-20%</text>"));
	CU_ASSERT_PTR_NOT_NULL(strstr(svg, ">+20%</text>"));
	/* text is escaped */
	CU_ASSERT_PTR_NOT_NULL(strstr(svg, "Linux &lt;test&gt; &amp; co"));
	CU_ASSERT_PTR_NULL(strstr(svg, "<test>"));
	if (out) {
		FILE *f = fopen(out, "w");

		if (f) {
			fputs(svg, f);
			fclose(f);
		}
	}
	free(svg);
	free(r);
}

/* Without target statistics the target CPU panel is left out. */
static void test_panels(void)
{
	struct bench_report *r = make_report(3, false);
	char *svg = render(r);

	CU_ASSERT_PTR_NULL(strstr(svg, "Target CPU per I/O"));
	CU_ASSERT_PTR_NOT_NULL(strstr(svg, "Initiator CPU per I/O"));
	CU_ASSERT_EQUAL(count(svg, "fill=\"#2b6cb0\"><title>"), 9);
	free(svg);
	free(r);
}

int main(void)
{
	static const CU_TestInfo tests[] = {
		{ "chart structure", test_structure },
		{ "panels with data only", test_panels },
		CU_TEST_INFO_NULL,
	};

	return ut_run("bench_svg", NULL, NULL, tests);
}
