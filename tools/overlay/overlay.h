/* overlay.h — a small C API over OpenCV for drawing diagnostic pictures: an RGB image, lines,
 * polylines, filled polygons, discs, text, value→colour maps, pixel reads and PNG output.
 *
 * Coordinates are image pixels (x right, y down), doubles rounded to the nearest pixel.
 * Every call returns NM_OK or a negative NM_ERR_* and, on failure, fills err; no C++ exception
 * ever leaves this API. Colours are 8-bit R, G, B. */
#ifndef NM_OVERLAY_H
#define NM_OVERLAY_H

#include <stddef.h>
#include <stdint.h>

#include "base/base.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct nm_ov_rgb {
    uint8_t r, g, b;
} nm_ov_rgb;

typedef struct nm_ov_image nm_ov_image;

/* Colour maps for nm_ov_colormap (OpenCV's COLORMAP_* of the same name). */
typedef enum nm_ov_cmap {
    NM_OV_CMAP_VIRIDIS = 0,
    NM_OV_CMAP_TURBO = 1,
    NM_OV_CMAP_JET = 2,
    NM_OV_CMAP_INFERNO = 3
} nm_ov_cmap;

/* Creates a w × h image filled with bg. [Limits: 1 <= w, h <= 32768] */
int nm_ov_create(nm_ov_image **out, int w, int h, nm_ov_rgb bg, nm_error *err);
void nm_ov_destroy(nm_ov_image *img);
int nm_ov_width(const nm_ov_image *img);
int nm_ov_height(const nm_ov_image *img);

/* A line from (x0, y0) to (x1, y1), thickness in pixels [Limits: 1..255], anti-aliased. */
int nm_ov_line(nm_ov_image *img, double x0, double y0, double x1, double y1, nm_ov_rgb c,
               int thickness, nm_error *err);
/* An open (closed = 0) or closed polyline through n points xy[2i], xy[2i+1]. [Limits: n >= 2] */
int nm_ov_polyline(nm_ov_image *img, const double *xy, size_t n, int closed, nm_ov_rgb c,
                   int thickness, nm_error *err);
/* A filled polygon of n points (any simple or self-touching polygon). [Limits: n >= 3] */
int nm_ov_fill_polygon(nm_ov_image *img, const double *xy, size_t n, nm_ov_rgb c, nm_error *err);
/* A disc of radius r pixels; filled when thickness <= 0, else a ring. */
int nm_ov_disc(nm_ov_image *img, double x, double y, double r, nm_ov_rgb c, int thickness,
               nm_error *err);
/* Text with its baseline's left end at (x, y); scale 1.0 is about 20 px tall (Hershey simplex). */
int nm_ov_text(nm_ov_image *img, double x, double y, const char *text, double scale,
               nm_ov_rgb c, nm_error *err);
/* The size of text drawn by nm_ov_text at this scale: width, height above the baseline and the
 * depth below it, in pixels (layouts reserve room so no text is ever clipped). */
int nm_ov_text_size(const char *text, double scale, int *w, int *above, int *below, nm_error *err);
/* An axis-aligned rectangle with corners (x0, y0) and (x1, y1) inclusive; filled when
 * thickness <= 0, else its outline. */
int nm_ov_rect(nm_ov_image *img, int x0, int y0, int x1, int y1, nm_ov_rgb c, int thickness,
               nm_error *err);
/* Copies src into dst with src's top-left corner at (x, y); the part outside dst is dropped. */
int nm_ov_blit(nm_ov_image *dst, const nm_ov_image *src, int x, int y, nm_error *err);
/* A new w x h image of src resampled (area averaging when shrinking). [Limits: as nm_ov_create] */
int nm_ov_resized(nm_ov_image **out, const nm_ov_image *src, int w, int h, nm_error *err);
/* The colour of value t in [0, 1] (clamped; NaN gives black) on colour map m. */
int nm_ov_colormap(nm_ov_cmap m, double t, nm_ov_rgb *out, nm_error *err);
/* The colour of pixel (x, y). */
int nm_ov_get_pixel(const nm_ov_image *img, int x, int y, nm_ov_rgb *out, nm_error *err);
/* Reads a PNG (or any format OpenCV decodes) into a new RGB image. */
int nm_ov_read_png(nm_ov_image **out, const char *path, nm_error *err);
/* Writes the image as a PNG file. */
int nm_ov_write_png(const nm_ov_image *img, const char *path, nm_error *err);

#ifdef __cplusplus
}
#endif
#endif
