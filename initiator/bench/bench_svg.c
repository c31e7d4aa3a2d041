/* SPDX-License-Identifier: MIT */
/*
 * nvmeof-bench: grouped bar charts as SVG, one panel per figure (IOPS, latency, CPU per
 * I/O), one group per workload, native and SCSI side by side with the difference above.
 */
#include "bench.h"

#include <math.h>
#include <string.h>

#define GROUP_W 64
#define BAR_W 22
#define LEFT 84
#define RIGHT 24
#define PANEL_H 190
#define LABEL_H 104 /* differences and rotated workload names under a panel */
#define TITLE_H 34
#define TOP 64

static const char *const path_color[BENCH_NPATHS] = { "#2b6cb0", "#dd6b20" };

struct panel {
	enum bench_metric m;
	enum bench_metric marker; /* drawn as a tick over each bar (BM_COUNT: none) */
	bool log;		  /* decades: values far apart stay readable */
	const char *title;
};

/* The value axis of a panel: linear from 0, or logarithmic between two powers of ten. */
struct axis {
	bool log;
	double lo, hi; /* linear: 0..hi; log: lo..hi (powers of 10) */
	double step;   /* linear grid step */
};

/* Pixels above the base line for @v (clamped to the panel). */
static int axis_h(const struct axis *a, double v)
{
	double f;

	if (a->log)
		f = v <= a->lo ? 0 : (log10(v) - log10(a->lo)) / (log10(a->hi) - log10(a->lo));
	else
		f = v / a->hi;
	if (f < 0)
		f = 0;
	if (f > 1)
		f = 1;
	return (int)lround(f * PANEL_H);
}

static double nice_step(double max)
{
	double raw = max / 5, mag, f;

	if (raw <= 0 || isnan(raw))
		return 1;
	mag = pow(10, floor(log10(raw)));
	f = raw / mag;
	return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 2.5 ? 2.5 : f <= 5 ? 5 : 10) * mag;
}

static void text_esc(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '&')
			fputs("&amp;", f);
		else if (*s == '<')
			fputs("&lt;", f);
		else if (*s == '>')
			fputs("&gt;", f);
		else
			fputc(*s, f);
	}
}

static double cell_value(const struct bench_cell *c, enum bench_path p, enum bench_metric m)
{
	const struct bench_path_result *r = &c->path[p];

	return r->ran && r->stat[m].n ? r->stat[m].median : NAN;
}

static bool panel_has_data(const struct bench_report *r, enum bench_metric m)
{
	for (unsigned int i = 0; i < r->ncells; i++)
		for (unsigned int p = 0; p < BENCH_NPATHS; p++)
			if (!isnan(cell_value(&r->cells[i], (enum bench_path)p, m)))
				return true;
	return false;
}

static void tick_label(FILE *f, double v, enum bench_metric m, char *buf, size_t len)
{
	(void)f;
	if (m == BM_IOPS)
		bench_fmt_count(v, buf, len);
	else if (v == floor(v))
		snprintf(buf, len, "%.0f", v);
	else
		snprintf(buf, len, "%.3g", v);
}

static void axis_fit(struct axis *a, bool log, double min, double max)
{
	a->log = log && min > 0;
	if (a->log) {
		a->lo = pow(10, floor(log10(min * 0.9))); /* the smallest bar shows */
		a->hi = pow(10, ceil(log10(max * 1.05)));
		if (a->hi <= a->lo)
			a->hi = a->lo * 10;
		return;
	}
	a->step = nice_step(max * 1.05);
	a->hi = ceil(max * 1.05 / a->step) * a->step;
	if (a->hi <= 0)
		a->hi = a->step;
}

static void draw_grid(FILE *f, const struct axis *a, enum bench_metric m, int x0, int base,
		      int plot_w)
{
	char buf[32];

	if (!a->log) {
		for (double v = 0; v <= a->hi * 1.0001; v += a->step) {
			int y = base - axis_h(a, v);

			tick_label(f, v, m, buf, sizeof(buf));
			fprintf(f,
				"<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" class=\"grid\"/>"
				"<text x=\"%d\" y=\"%d\" class=\"ytick\">%s</text>\n",
				x0, y, x0 + plot_w, y, x0 - 6, y + 4, buf);
		}
		return;
	}
	for (double dec = a->lo; dec <= a->hi * 1.0001; dec *= 10) {
		int y = base - axis_h(a, dec);

		tick_label(f, dec, m, buf, sizeof(buf));
		fprintf(f,
			"<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" class=\"grid\"/>"
			"<text x=\"%d\" y=\"%d\" class=\"ytick\">%s</text>\n",
			x0, y, x0 + plot_w, y, x0 - 6, y + 4, buf);
		for (int k = 2; k <= 9 && dec * k < a->hi; k++) {
			y = base - axis_h(a, dec * k);
			fprintf(f,
				"<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" "
				"class=\"minor\"/>\n",
				x0, y, x0 + plot_w, y);
		}
	}
}

static void draw_panel(FILE *f, const struct bench_report *r, const struct panel *pn, int y0,
		       int plot_w)
{
	double max = 0, min = INFINITY;
	int x0 = LEFT, base = y0 + TITLE_H + PANEL_H;
	struct axis ax;

	for (unsigned int i = 0; i < r->ncells; i++)
		for (unsigned int p = 0; p < BENCH_NPATHS; p++) {
			double v = cell_value(&r->cells[i], (enum bench_path)p, pn->m);
			double mk =
				pn->marker < BM_COUNT
					? cell_value(&r->cells[i], (enum bench_path)p, pn->marker)
					: NAN;

			if (!isnan(v) && v > max)
				max = v;
			if (!isnan(v) && v > 0 && v < min)
				min = v;
			if (!isnan(mk) && mk > max)
				max = mk;
		}
	axis_fit(&ax, pn->log, min, max);

	fprintf(f, "<text x=\"%d\" y=\"%d\" class=\"title\">", x0, y0 + 22);
	text_esc(f, pn->title);
	fprintf(f, "%s</text>\n", ax.log ? " (log scale)" : "");
	draw_grid(f, &ax, pn->m, x0, base, plot_w);
	fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" class=\"axis\"/>\n", x0,
		y0 + TITLE_H, x0, base);
	fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" class=\"axis\"/>\n", x0, base,
		x0 + plot_w, base);

	for (unsigned int i = 0; i < r->ncells; i++) {
		const struct bench_cell *c = &r->cells[i];
		int gx = x0 + (int)i * GROUP_W + (GROUP_W - 2 * BAR_W) / 2;
		double d = bench_diff_pct(cell_value(c, BENCH_NATIVE, pn->m),
					  cell_value(c, BENCH_SCSI, pn->m));

		for (unsigned int p = 0; p < BENCH_NPATHS; p++) {
			double v = cell_value(c, (enum bench_path)p, pn->m);
			double mk = pn->marker < BM_COUNT
					    ? cell_value(c, (enum bench_path)p, pn->marker)
					    : NAN;
			int bx = gx + (int)p * BAR_W, h;

			if (isnan(v))
				continue;
			h = axis_h(&ax, v);
			fprintf(f,
				"<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"%s\">"
				"<title>",
				bx, base - h, BAR_W - 2, h, path_color[p]);
			text_esc(f, c->label);
			fprintf(f, " %s: %.4g %s</title></rect>\n",
				bench_path_name((enum bench_path)p), v, bench_metrics[pn->m].unit);
			if (!isnan(mk)) {
				int my = base - axis_h(&ax, mk);

				fprintf(f,
					"<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" "
					"class=\"marker\"/>"
					"<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" "
					"class=\"whisker\"/>\n",
					bx + 2, my, bx + BAR_W - 4, my, bx + BAR_W / 2 - 1, my,
					bx + BAR_W / 2 - 1, base - h);
			}
		}
		if (!isnan(d))
			fprintf(f, "<text x=\"%d\" y=\"%d\" class=\"diff\">%+.0f%%</text>\n",
				gx + BAR_W - 1, base + 13, d);
		fprintf(f,
			"<text x=\"%d\" y=\"%d\" class=\"xtick\" transform=\"rotate(-40 %d %d)\">",
			gx + BAR_W, base + 28, gx + BAR_W, base + 28);
		text_esc(f, c->label);
		fprintf(f, "</text>\n");
	}
}

int bench_svg_write(FILE *f, const struct bench_report *r)
{
	static const struct panel all[] = {
		{ BM_IOPS, BM_COUNT, true, "IOPS (higher is better)" },
		{ BM_LAT_AVG, BM_LAT_P99, true,
		  "Latency, us: bar = average, tick = p99 (lower is better)" },
		{ BM_TGT_CPU, BM_COUNT, false, "Target CPU per I/O, us (lower is better)" },
		{ BM_INIT_CPU, BM_COUNT, false, "Initiator CPU per I/O, us (lower is better)" },
	};
	const struct panel *use[sizeof(all) / sizeof(all[0])];
	unsigned int npanels = 0;
	int plot_w = (int)(r->ncells ? r->ncells : 1) * GROUP_W;
	int width = LEFT + plot_w + RIGHT, height, y;

	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		if (panel_has_data(r, all[i].m))
			use[npanels++] = &all[i];
	if (width < 640)
		width = 640;
	height = TOP + (int)npanels * (TITLE_H + PANEL_H + LABEL_H) + 10;

	fprintf(f,
		"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
		"viewBox=\"0 0 %d %d\">\n"
		"<style>text{font-family:DejaVu Sans,Helvetica,Arial,sans-serif;font-size:11px;"
		"fill:#222}.title{font-size:13px;font-weight:bold}.head{font-size:15px;"
		"font-weight:bold}.ytick{text-anchor:end}.xtick{text-anchor:end}"
		".diff{text-anchor:middle;font-size:10px;fill:#555}.grid{stroke:#d8d8d8}.minor{"
		"stroke:#f0f0f0}"
		".axis{stroke:#444}.marker{stroke:#111;stroke-width:2}"
		".whisker{stroke:#111;stroke-width:1;stroke-dasharray:2,2}</style>\n"
		"<rect width=\"100%%\" height=\"100%%\" fill=\"#fff\"/>\n",
		width, height, width, height);
	fprintf(f,
		"<text x=\"%d\" y=\"22\" class=\"head\">nvmeof-bench: native NVMe/TCP vs SCSI "
		"over iSCSI</text>\n",
		LEFT);
	fprintf(f, "<text x=\"%d\" y=\"40\">", LEFT);
	text_esc(f, r->host);
	fprintf(f, ", %u job%s, %.1f s per run, %u repeat%s (median)</text>\n", r->o->jobs,
		r->o->jobs == 1 ? "" : "s", r->o->time_s, r->o->repeat,
		r->o->repeat == 1 ? "" : "s");
	for (unsigned int p = 0; p < BENCH_NPATHS; p++) {
		int lx = LEFT + (int)p * 85;

		fprintf(f,
			"<rect x=\"%d\" y=\"48\" width=\"12\" height=\"12\" fill=\"%s\"/>"
			"<text x=\"%d\" y=\"58\">%s</text>\n",
			lx, path_color[p], lx + 16, bench_path_name((enum bench_path)p));
	}
	fprintf(f, "<text x=\"%d\" y=\"58\">under each group: SCSI vs native</text>\n",
		LEFT + 2 * 85);
	y = TOP;
	for (unsigned int i = 0; i < npanels; i++) {
		draw_panel(f, r, use[i], y, plot_w);
		y += TITLE_H + PANEL_H + LABEL_H;
	}
	fprintf(f, "</svg>\n");
	return ferror(f) ? -1 : 0;
}
