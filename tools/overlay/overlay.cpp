/* overlay.cpp — the OpenCV side of the overlay binding (overlay.h): an RGB image held as a
 * cv::Mat in BGR order, drawing calls, colour maps and PNG output. Every entry point catches
 * every exception, so callers in C only ever see a status and a message. */
#include "overlay.h"

#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

#include <cmath>
#include <cstdio>
#include <exception>
#include <new>
#include <vector>

struct nm_ov_image {
    cv::Mat m; /* CV_8UC3, BGR */
};

namespace {

cv::Scalar bgr(nm_ov_rgb c) { return cv::Scalar(c.b, c.g, c.r); }

/* Rounds a coordinate; far-off values are clamped so the int conversion is defined
 * (OpenCV clips the drawing itself). */
int px(double v)
{
    if (!(v == v)) return 0;
    if (v > 1e8) return 100000000;
    if (v < -1e8) return -100000000;
    return (int)std::lround(v);
}

bool finite_all(const double *xy, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!std::isfinite(xy[i])) return false;
    return true;
}

int thick_ok(int t) { return t >= 1 && t <= 255; }

/* The font and stroke nm_ov_text uses for a scale (one place, so sizes match drawing). */
double font_scale(double scale) { return scale * 0.6; }
int font_thick(double scale) { return scale >= 1.5 ? 2 : 1; }

int caught(nm_error *err, const char *what, const std::exception *e)
{
    if (dynamic_cast<const std::bad_alloc *>(e))
        return nm_fail(err, NM_ERR_NOMEM, "overlay: %s: out of memory", what);
    return nm_fail(err, NM_ERR_STATE, "overlay: %s: %s", what, e ? e->what() : "unknown error");
}

} // namespace

/* Wraps a body so that no exception escapes. */
#define OV_GUARD(what, ...)                                                                      \
    try {                                                                                         \
        __VA_ARGS__                                                                               \
    } catch (const std::exception &e) {                                                           \
        return caught(err, what, &e);                                                             \
    } catch (...) {                                                                               \
        return caught(err, what, nullptr);                                                        \
    }

extern "C" int nm_ov_create(nm_ov_image **out, int w, int h, nm_ov_rgb bg, nm_error *err)
{
    if (!out) return nm_fail(err, NM_ERR_ARG, "overlay: create: out is NULL");
    *out = nullptr;
    if (w < 1 || h < 1 || w > 32768 || h > 32768)
        return nm_fail(err, NM_ERR_ARG, "overlay: create: size %d x %d out of range", w, h);
    OV_GUARD("create", {
        nm_ov_image *img = new nm_ov_image;
        try {
            img->m = cv::Mat(h, w, CV_8UC3, bgr(bg));
        } catch (...) {
            delete img;
            throw;
        }
        *out = img;
        return NM_OK;
    })
}

extern "C" void nm_ov_destroy(nm_ov_image *img)
{
    delete img; /* cv::Mat's destructor does not throw */
}

extern "C" int nm_ov_width(const nm_ov_image *img) { return img ? img->m.cols : 0; }
extern "C" int nm_ov_height(const nm_ov_image *img) { return img ? img->m.rows : 0; }

extern "C" int nm_ov_line(nm_ov_image *img, double x0, double y0, double x1, double y1,
                          nm_ov_rgb c, int thickness, nm_error *err)
{
    if (!img) return nm_fail(err, NM_ERR_ARG, "overlay: line: image is NULL");
    double p[4] = {x0, y0, x1, y1};
    if (!finite_all(p, 4)) return nm_fail(err, NM_ERR_ARG, "overlay: line: non-finite point");
    if (!thick_ok(thickness))
        return nm_fail(err, NM_ERR_ARG, "overlay: line: thickness %d out of range", thickness);
    OV_GUARD("line", {
        cv::line(img->m, cv::Point(px(x0), px(y0)), cv::Point(px(x1), px(y1)), bgr(c),
                 thickness, cv::LINE_AA);
        return NM_OK;
    })
}

static int to_points(const double *xy, size_t n, std::vector<cv::Point> &pts)
{
    pts.resize(n);
    for (size_t i = 0; i < n; i++) pts[i] = cv::Point(px(xy[2 * i]), px(xy[2 * i + 1]));
    return NM_OK;
}

extern "C" int nm_ov_polyline(nm_ov_image *img, const double *xy, size_t n, int closed,
                              nm_ov_rgb c, int thickness, nm_error *err)
{
    if (!img || !xy) return nm_fail(err, NM_ERR_ARG, "overlay: polyline: NULL argument");
    if (n < 2 || n > (1u << 24))
        return nm_fail(err, NM_ERR_ARG, "overlay: polyline: %zu points", n);
    if (!finite_all(xy, 2 * n))
        return nm_fail(err, NM_ERR_ARG, "overlay: polyline: non-finite point");
    if (!thick_ok(thickness))
        return nm_fail(err, NM_ERR_ARG, "overlay: polyline: thickness %d out of range", thickness);
    OV_GUARD("polyline", {
        std::vector<cv::Point> pts;
        to_points(xy, n, pts);
        cv::polylines(img->m, pts, closed != 0, bgr(c), thickness, cv::LINE_AA);
        return NM_OK;
    })
}

extern "C" int nm_ov_fill_polygon(nm_ov_image *img, const double *xy, size_t n, nm_ov_rgb c,
                                  nm_error *err)
{
    if (!img || !xy) return nm_fail(err, NM_ERR_ARG, "overlay: fill_polygon: NULL argument");
    if (n < 3 || n > (1u << 24))
        return nm_fail(err, NM_ERR_ARG, "overlay: fill_polygon: %zu points", n);
    if (!finite_all(xy, 2 * n))
        return nm_fail(err, NM_ERR_ARG, "overlay: fill_polygon: non-finite point");
    OV_GUARD("fill_polygon", {
        std::vector<cv::Point> pts;
        to_points(xy, n, pts);
        const cv::Point *pp = pts.data();
        int cnt = (int)n;
        /* 8-connected fill, no anti-aliasing: flat colours stay exact for readers of pixels. */
        cv::fillPoly(img->m, &pp, &cnt, 1, bgr(c), cv::LINE_8);
        return NM_OK;
    })
}

extern "C" int nm_ov_disc(nm_ov_image *img, double x, double y, double r, nm_ov_rgb c,
                          int thickness, nm_error *err)
{
    if (!img) return nm_fail(err, NM_ERR_ARG, "overlay: disc: image is NULL");
    double p[3] = {x, y, r};
    if (!finite_all(p, 3) || r < 0 || r > 1e6)
        return nm_fail(err, NM_ERR_ARG, "overlay: disc: bad centre or radius");
    if (thickness > 255)
        return nm_fail(err, NM_ERR_ARG, "overlay: disc: thickness %d out of range", thickness);
    OV_GUARD("disc", {
        cv::circle(img->m, cv::Point(px(x), px(y)), px(r), bgr(c),
                   thickness <= 0 ? cv::FILLED : thickness, cv::LINE_8);
        return NM_OK;
    })
}

extern "C" int nm_ov_text(nm_ov_image *img, double x, double y, const char *text, double scale,
                          nm_ov_rgb c, nm_error *err)
{
    if (!img || !text) return nm_fail(err, NM_ERR_ARG, "overlay: text: NULL argument");
    double p[3] = {x, y, scale};
    if (!finite_all(p, 3) || scale <= 0 || scale > 100)
        return nm_fail(err, NM_ERR_ARG, "overlay: text: bad position or scale");
    OV_GUARD("text", {
        cv::putText(img->m, text, cv::Point(px(x), px(y)), cv::FONT_HERSHEY_SIMPLEX, font_scale(scale),
                    bgr(c), font_thick(scale), cv::LINE_AA);
        return NM_OK;
    })
}

extern "C" int nm_ov_text_size(const char *text, double scale, int *w, int *above, int *below,
                               nm_error *err)
{
    if (!text || !w || !above || !below)
        return nm_fail(err, NM_ERR_ARG, "overlay: text_size: NULL argument");
    if (!std::isfinite(scale) || scale <= 0 || scale > 100)
        return nm_fail(err, NM_ERR_ARG, "overlay: text_size: bad scale");
    OV_GUARD("text_size", {
        int base = 0;
        cv::Size sz = cv::getTextSize(text, cv::FONT_HERSHEY_SIMPLEX, font_scale(scale),
                                      font_thick(scale), &base);
        /* anti-aliased strokes reach about one stroke width past the box OpenCV reports */
        int t = font_thick(scale);
        *w = sz.width + t;
        *above = sz.height + t;
        *below = base + t;
        return NM_OK;
    })
}

extern "C" int nm_ov_rect(nm_ov_image *img, int x0, int y0, int x1, int y1, nm_ov_rgb c,
                          int thickness, nm_error *err)
{
    if (!img) return nm_fail(err, NM_ERR_ARG, "overlay: rect: image is NULL");
    if (thickness > 255)
        return nm_fail(err, NM_ERR_ARG, "overlay: rect: thickness %d out of range", thickness);
    OV_GUARD("rect", {
        cv::rectangle(img->m, cv::Point(x0, y0), cv::Point(x1, y1), bgr(c),
                      thickness <= 0 ? cv::FILLED : thickness, cv::LINE_8);
        return NM_OK;
    })
}

extern "C" int nm_ov_blit(nm_ov_image *dst, const nm_ov_image *src, int x, int y, nm_error *err)
{
    if (!dst || !src) return nm_fail(err, NM_ERR_ARG, "overlay: blit: NULL argument");
    OV_GUARD("blit", {
        cv::Rect d(x, y, src->m.cols, src->m.rows);
        cv::Rect in = d & cv::Rect(0, 0, dst->m.cols, dst->m.rows);
        if (in.width <= 0 || in.height <= 0) return NM_OK;
        cv::Rect s(in.x - x, in.y - y, in.width, in.height);
        src->m(s).copyTo(dst->m(in));
        return NM_OK;
    })
}

extern "C" int nm_ov_resized(nm_ov_image **out, const nm_ov_image *src, int w, int h, nm_error *err)
{
    if (!out || !src) return nm_fail(err, NM_ERR_ARG, "overlay: resized: NULL argument");
    *out = nullptr;
    if (w < 1 || h < 1 || w > 32768 || h > 32768)
        return nm_fail(err, NM_ERR_ARG, "overlay: resized: size %d x %d out of range", w, h);
    OV_GUARD("resized", {
        nm_ov_image *img = new nm_ov_image;
        try {
            bool shrink = w < src->m.cols || h < src->m.rows;
            cv::resize(src->m, img->m, cv::Size(w, h), 0, 0, shrink ? cv::INTER_AREA : cv::INTER_NEAREST);
        } catch (...) {
            delete img;
            throw;
        }
        *out = img;
        return NM_OK;
    })
}

static int cv_map(nm_ov_cmap m)
{
    switch (m) {
    case NM_OV_CMAP_VIRIDIS: return cv::COLORMAP_VIRIDIS;
    case NM_OV_CMAP_TURBO: return cv::COLORMAP_TURBO;
    case NM_OV_CMAP_JET: return cv::COLORMAP_JET;
    case NM_OV_CMAP_INFERNO: return cv::COLORMAP_INFERNO;
    }
    return -1;
}

extern "C" int nm_ov_colormap(nm_ov_cmap m, double t, nm_ov_rgb *out, nm_error *err)
{
    if (!out) return nm_fail(err, NM_ERR_ARG, "overlay: colormap: out is NULL");
    int cm = cv_map(m);
    if (cm < 0) return nm_fail(err, NM_ERR_ARG, "overlay: colormap: unknown map %d", (int)m);
    if (!(t == t)) {
        out->r = out->g = out->b = 0;
        return NM_OK;
    }
    if (t < 0) t = 0;
    if (t > 1) t = 1;
    OV_GUARD("colormap", {
        cv::Mat one(1, 1, CV_8UC1, cv::Scalar((int)std::lround(t * 255.0)));
        cv::Mat col;
        cv::applyColorMap(one, col, cm);
        cv::Vec3b v = col.at<cv::Vec3b>(0, 0);
        out->b = v[0];
        out->g = v[1];
        out->r = v[2];
        return NM_OK;
    })
}

extern "C" int nm_ov_get_pixel(const nm_ov_image *img, int x, int y, nm_ov_rgb *out,
                               nm_error *err)
{
    if (!img || !out) return nm_fail(err, NM_ERR_ARG, "overlay: get_pixel: NULL argument");
    if (x < 0 || y < 0 || x >= img->m.cols || y >= img->m.rows)
        return nm_fail(err, NM_ERR_ARG, "overlay: get_pixel: (%d, %d) outside %d x %d", x, y,
                       img->m.cols, img->m.rows);
    cv::Vec3b v = img->m.at<cv::Vec3b>(y, x);
    out->b = v[0];
    out->g = v[1];
    out->r = v[2];
    return NM_OK;
}

extern "C" int nm_ov_write_png(const nm_ov_image *img, const char *path, nm_error *err)
{
    if (!img || !path) return nm_fail(err, NM_ERR_ARG, "overlay: write_png: NULL argument");
    OV_GUARD("write_png", {
        std::vector<int> params = {cv::IMWRITE_PNG_COMPRESSION, 6};
        if (!cv::imwrite(path, img->m, params))
            return nm_fail(err, NM_ERR_IO, "%s: overlay: write_png: cannot write", path);
        return NM_OK;
    })
}

extern "C" int nm_ov_read_png(nm_ov_image **out, const char *path, nm_error *err)
{
    if (!out || !path) return nm_fail(err, NM_ERR_ARG, "overlay: read_png: NULL argument");
    *out = nullptr;
    /* OpenCV logs to stderr on a missing file; library code must not print, so look first. */
    FILE *f = std::fopen(path, "rb");
    if (!f) return nm_fail(err, NM_ERR_IO, "%s: overlay: read_png: cannot open", path);
    std::fclose(f);
    OV_GUARD("read_png", {
        cv::Mat m = cv::imread(path, cv::IMREAD_COLOR);
        if (m.empty()) return nm_fail(err, NM_ERR_IO, "%s: overlay: read_png: cannot read", path);
        nm_ov_image *img = new nm_ov_image;
        img->m = m;
        *out = img;
        return NM_OK;
    })
}
