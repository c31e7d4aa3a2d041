/* SPDX-License-Identifier: MIT */
/*
 * nvmeof-bench: the chart as SVG. First the story at a glance: per workload, how much SCSI
 * differs from native in IOPS, latency and target CPU per I/O, with the runs' spread as
 * whiskers. Then grouped bar charts, one panel per figure (IOPS, latency, CPU per I/O on
 * log scales so QD1 and QD32 both read), native and SCSI side by side with the difference
 * under each group; the SCSI translation time is the dark inset of the SCSI CPU bar.
 */
#include "bench.h"

#include <math.h>
#include <string.h>

#define GROUP_W   64
#define BAR_W     22
#define LEFT      84
#define RIGHT     24
#define PANEL_H   190
#define LABEL_H   104 /* differences and rotated workload names under a panel */
#define TITLE_H   34
#define TOP       30
#define CAPTION_H 60 /* machine, settings and spread under the heading */
#define LEGEND_H  16 /* the difference panel's legend under its title */
#define PATHS_H   26 /* the native/SCSI legend above the bar panels */

static const char *const path_color[BENCH_NPATHS] = { "#2b6cb0", "#dd6b20" };

struct panel {
	enum bench_metric m;
	enum bench_metric marker;  /* drawn as a tick over each bar (BM_COUNT: none) */
	enum bench_metric overlay; /* the SCSI bar's inset from the base (BM_COUNT: none) */
	bool log;                  /* decades: values far apart stay readable */
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
			if (pn->overlay < BM_COUNT && p == BENCH_SCSI) {
				double ov = cell_value(&r->cells[i], BENCH_SCSI, pn->overlay);

				if (!isnan(ov) && ov > 0 && ov < min)
					min = ov;
			}
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
			if (pn->overlay < BM_COUNT && p == BENCH_SCSI) {
				double ov = cell_value(c, BENCH_SCSI, pn->overlay);
				int oh = isnan(ov) ? 0 : axis_h(&ax, ov);

				if (oh > h)
					oh = h;
				if (oh > 0)
					fprintf(f,
						"<rect x=\"%d\" y=\"%d\" width=\"%d\" "
						"height=\"%d\" "
						"class=\"inset\"><title>SCSI translation: %.3g us "
						"per I/O</title></rect>\n",
						bx + 4, base - oh, BAR_W - 10, oh, ov);
			}
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

/* ---- the first panel: SCSI vs native in % ---------------------------------------------- */
static const struct {
	enum bench_metric m;
	const char *name, *color;
} diff_series[] = {
	{ BM_IOPS, "IOPS", "#2f855a" },
	{ BM_LAT_AVG, "average latency", "#805ad5" },
	{ BM_TGT_CPU, "target CPU per I/O", "#c05621" },
};
#define NSERIES    (sizeof(diff_series) / sizeof(diff_series[0]))
#define DIFF_BAR_W 18

static double cell_diff(const struct bench_cell *c, enum bench_metric m)
{
	return bench_diff_pct(cell_value(c, BENCH_NATIVE, m), cell_value(c, BENCH_SCSI, m));
}

/* The two paths' spreads added: how far apart noise alone puts them. */
static double cell_noise(const struct bench_cell *c, enum bench_metric m)
{
	double a = c->path[BENCH_NATIVE].ran ? bench_spread_pct(&c->path[BENCH_NATIVE].stat[m])
					     : NAN;
	double b = c->path[BENCH_SCSI].ran ? bench_spread_pct(&c->path[BENCH_SCSI].stat[m]) : NAN;

	return isnan(a) || isnan(b) ? NAN : a + b;
}

static bool diff_panel_has_data(const struct bench_report *r)
{
	for (unsigned int i = 0; i < r->ncells; i++)
		if (!isnan(cell_diff(&r->cells[i], BM_IOPS)))
			return true;
	return false;
}

static void draw_diff_panel(FILE *f, const struct bench_report *r, int y0, int plot_w)
{
	int x0 = LEFT, top = y0 + TITLE_H + LEGEND_H, base = top + PANEL_H, mid = top + PANEL_H / 2;
	double lim = 10, step;
	char buf[32];

	/* the scale fits the differences; whiskers of a noisy run are cut at the edge */
	for (unsigned int i = 0; i < r->ncells; i++)
		for (size_t k = 0; k < NSERIES; k++) {
			double d = cell_diff(&r->cells[i], diff_series[k].m);

			if (!isnan(d) && fabs(d) * 1.25 > lim)
				lim = fabs(d) * 1.25;
		}
	step = nice_step(lim * 1.05);
	lim = ceil(lim * 1.05 / step) * step;
	fprintf(f,
		"<text x=\"%d\" y=\"%d\" class=\"title\">SCSI vs native, %% per workload "
		"(IOPS: higher is better for SCSI; latency and CPU: lower is)</text>\n",
		x0, y0 + 22);
	for (double v = -lim; v <= lim * 1.0001; v += step) {
		int y = mid - (int)lround(v / lim * (PANEL_H / 2));

		snprintf(buf, sizeof(buf), "%+.0f%%", v);
		fprintf(f,
			"<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" class=\"%s\"/>"
			"<text x=\"%d\" y=\"%d\" class=\"ytick\">%s</text>\n",
			x0, y, x0 + plot_w, y, fabs(v) < step / 2 ? "axis" : "grid", x0 - 6, y + 4,
			fabs(v) < step / 2 ? "0" : buf);
	}
	fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" class=\"axis\"/>\n", x0, top, x0,
		base);
	for (unsigned int i = 0; i < r->ncells; i++) {
		const struct bench_cell *c = &r->cells[i];
		int gx = x0 + (int)i * GROUP_W + (GROUP_W - (int)NSERIES * DIFF_BAR_W) / 2;

		for (size_t k = 0; k < NSERIES; k++) {
			double d = cell_diff(c, diff_series[k].m),
			       nz = cell_noise(c, diff_series[k].m);
			int bx = gx + (int)k * DIFF_BAR_W, y1, y2;

			if (isnan(d))
				continue;
			y1 = mid - (int)lround((d > 0 ? d : 0) / lim * (PANEL_H / 2));
			y2 = mid - (int)lround((d < 0 ? d : 0) / lim * (PANEL_H / 2));
			fprintf(f,
				"<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"%s\"%s>"
				"<title>",
				bx, y1, DIFF_BAR_W - 2, y2 - y1 > 0 ? y2 - y1 : 1,
				diff_series[k].color,
				!isnan(nz) && fabs(d) <= nz ? " fill-opacity=\"0.35\"" : "");
			text_esc(f, c->label);
			fprintf(f, ", %s: %+.1f%% (runs spread %s%.1f%%)</title></rect>\n",
				diff_series[k].name, d, isnan(nz) ? "unknown " : "+-",
				isnan(nz) ? 0 : nz);
			if (!isnan(nz) && nz > 0) {
				int cx = bx + DIFF_BAR_W / 2 - 1;
				double hi = d + nz > lim ? lim : d + nz,
				       lo = d - nz < -lim ? -lim : d - nz;
				int ya = mid - (int)lround(hi / lim * (PANEL_H / 2));
				int yb = mid - (int)lround(lo / lim * (PANEL_H / 2));

				fprintf(f,
					"<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" "
					"class=\"err\"/>"
					"<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" "
					"class=\"err\"/>"
					"<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" "
					"class=\"err\"/>\n",
					cx, ya, cx, yb, cx - 3, ya, cx + 3, ya, cx - 3, yb, cx + 3,
					yb);
			}
		}
		fprintf(f,
			"<text x=\"%d\" y=\"%d\" class=\"xtick\" transform=\"rotate(-40 %d %d)\">",
			gx + DIFF_BAR_W, base + 16, gx + DIFF_BAR_W, base + 16);
		text_esc(f, c->label);
		fprintf(f, "</text>\n");
	}
	for (size_t k = 0; k < NSERIES; k++) {
		int lx = x0 + (int)k * 150;

		fprintf(f,
			"<rect x=\"%d\" y=\"%d\" width=\"12\" height=\"12\" fill=\"%s\"/>"
			"<text x=\"%d\" y=\"%d\">%s</text>\n",
			lx, y0 + TITLE_H - 4, diff_series[k].color, lx + 16, y0 + TITLE_H + 6,
			diff_series[k].name);
	}
	fprintf(f,
		"<text x=\"%d\" y=\"%d\">whiskers: the runs' spread (cut at the edge); "
		"pale: inside it, noise</text>\n",
		x0 + (int)NSERIES * 150, y0 + TITLE_H + 6);
}

/* The caption: machine, transfer settings, runs and their spread. */
static void caption(FILE *f, const struct bench_report *r, int y)
{
	const struct bench_settings *n = &r->set[BENCH_NATIVE], *sc = &r->set[BENCH_SCSI];
	double spread = bench_report_max_spread(r);

	fprintf(f, "<text x=\"%d\" y=\"%d\">", LEFT, y);
	text_esc(f, r->host);
	fprintf(f,
		"; %u job%s, %.1f s per run after %.1f s warm-up, median of %u run%s per path, "
		"paths alternated</text>\n",
		r->o->jobs, r->o->jobs == 1 ? "" : "s", r->o->time_s, r->o->warmup_s, r->o->repeat,
		r->o->repeat == 1 ? "" : "s");
	fprintf(f,
		"<text x=\"%d\" y=\"%d\">native: in-capsule data %u B, digests %s; SCSI: "
		"FirstBurstLength %u B, ImmediateData=%s, InitialR2T=%s, digests %s</text>\n",
		LEFT, y + 16, n->in_capsule, n->hdgst || n->ddgst ? "on" : "off", sc->first_burst,
		sc->immediate_data ? "Yes" : "No", sc->initial_r2t ? "Yes" : "No",
		sc->hdgst || sc->ddgst ? "on" : "off");
	fprintf(f, "<text x=\"%d\" y=\"%d\" class=\"%s\">", LEFT, y + 32,
		isnan(spread) || spread > 10 ? "warn" : "note");
	if (isnan(spread))
		fprintf(f, "one run each: no spread known, differences are not a result");
	else if (spread > 10)
		fprintf(f,
			"NOISY: runs spread up to +-%.1f%%: read differences inside the "
			"whiskers as noise",
			spread);
	else
		fprintf(f, "runs agree within +-%.1f%%", spread);
	if (r->unfair[0]) {
		fputs("; WARNING: ", f);
		text_esc(f, r->unfair);
	}
	fprintf(f, "</text>\n");
}

int bench_svg_write(FILE *f, const struct bench_report *r)
{
	static const struct panel all[] = {
		{ BM_IOPS, BM_COUNT, BM_COUNT, true, "IOPS (higher is better)" },
		{ BM_LAT_AVG, BM_LAT_P99, BM_COUNT, true,
		  "Latency, us: bar = average, tick = p99 (lower is better)" },
		{ BM_TGT_CPU, BM_COUNT, BM_TGT_XLATE, true,
		  "Target CPU per I/O, us; dark inset: SCSI translation (lower is better)" },
		{ BM_INIT_CPU, BM_COUNT, BM_INIT_XLATE, true,
		  "Initiator CPU per I/O, us; dark inset: SCSI translation (lower is better)" },
	};
	const struct panel *use[sizeof(all) / sizeof(all[0])];
	unsigned int npanels = 0;
	int plot_w = (int)(r->ncells ? r->ncells : 1) * GROUP_W;
	int width = LEFT + plot_w + RIGHT, height, y;
	bool diff = diff_panel_has_data(r);

	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		if (panel_has_data(r, all[i].m))
			use[npanels++] = &all[i];
	if (width < 900)
		width = 900;
	height = TOP + CAPTION_H + ((int)npanels + diff) * (TITLE_H + PANEL_H + LABEL_H) +
		 (diff ? LEGEND_H : 0) + PATHS_H + 30;

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
		".whisker{stroke:#111;stroke-width:1;stroke-dasharray:2,2}.err{stroke:#111;"
		"stroke-width:1}.inset{fill:#1a1a1a;fill-opacity:0.55}.warn{fill:#c53030;"
		"font-weight:bold}.note{fill:#2f855a}</style>\n"
		"<rect width=\"100%%\" height=\"100%%\" fill=\"#fff\"/>\n",
		width, height, width, height);
	fprintf(f,
		"<text x=\"%d\" y=\"22\" class=\"head\">nvmeof-bench: native NVMe/TCP vs SCSI "
		"over iSCSI</text>\n",
		LEFT);
	caption(f, r, 40);
	y = TOP + CAPTION_H;
	if (diff) {
		draw_diff_panel(f, r, y, plot_w);
		y += TITLE_H + LEGEND_H + PANEL_H + LABEL_H;
	}
	for (unsigned int p = 0; p < BENCH_NPATHS; p++) {
		int lx = LEFT + (int)p * 85;

		fprintf(f,
			"<rect x=\"%d\" y=\"%d\" width=\"12\" height=\"12\" fill=\"%s\"/>"
			"<text x=\"%d\" y=\"%d\">%s</text>\n",
			lx, y + 2, path_color[p], lx + 16, y + 12,
			bench_path_name((enum bench_path)p));
	}
	fprintf(f, "<text x=\"%d\" y=\"%d\">under each group: SCSI vs native</text>\n",
		LEFT + 2 * 85, y + 12);
	y += PATHS_H;
	for (unsigned int i = 0; i < npanels; i++) {
		draw_panel(f, r, use[i], y, plot_w);
		y += TITLE_H + PANEL_H + LABEL_H;
	}
	fprintf(f, "</svg>\n");
	return ferror(f) ? -1 : 0;
}
