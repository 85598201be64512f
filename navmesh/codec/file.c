/* file.c — whole-file reads and writes for the packs (design article 读取路径): names ending in
 * ".gz" go through zlib's gz reader, with the gzip ISIZE trailer used to reserve the buffer once
 * (no doubling with two copies alive) and reads done in 4 MiB pieces into heap memory. */
#include "codec.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

#define READ_CHUNK (4u << 20)

bool nm_path_has_suffix(const char *path, const char *suffix)
{
    size_t n = strlen(path), m = strlen(suffix);
    return n >= m && strcmp(path + n - m, suffix) == 0;
}

/* The ISIZE trailer: the uncompressed size mod 2^32 of the last gzip member. A hint only. */
static size_t gzip_isize_hint(const char *path)
{
    FILE *f = fopen(path, "rb");
    uint8_t t[4];
    size_t hint = 0;
    if (!f) return 0;
    if (fseek(f, -4, SEEK_END) == 0 && fread(t, 1, 4, f) == 4)
        hint = (size_t)t[0] | (size_t)t[1] << 8 | (size_t)t[2] << 16 | (size_t)t[3] << 24;
    fclose(f);
    return hint;
}

static int grow(uint8_t **buf, size_t *cap, size_t need, size_t max_size, const char *path, nm_error *err)
{
    if (need <= *cap) return NM_OK;
    if (need > max_size) return nm_fail(err, NM_ERR_CORRUPT, "%s: larger than %zu bytes", path, max_size);
    size_t cap2 = *cap ? *cap : READ_CHUNK;
    while (cap2 < need) cap2 = cap2 > max_size / 2 ? max_size : cap2 * 2;
    uint8_t *p = (uint8_t *)nm_realloc(*buf, cap2);
    if (!p) return nm_fail(err, NM_ERR_NOMEM, "%s: out of memory reading %zu bytes", path, cap2);
    *buf = p;
    *cap = cap2;
    return NM_OK;
}

static int read_gz(const char *path, size_t max_size, uint8_t **data, size_t *size, nm_error *err)
{
    size_t hint = gzip_isize_hint(path);
    gzFile g = gzopen(path, "rb");
    if (!g) return nm_fail(err, NM_ERR_IO, "%s: cannot open: %s", path, strerror(errno ? errno : ENOENT));
    gzbuffer(g, 1u << 17);
    uint8_t *buf = NULL;
    size_t cap = 0, n = 0;
    int rc = grow(&buf, &cap, hint ? (hint < max_size ? hint : max_size) : READ_CHUNK, max_size, path, err);
    while (rc == NM_OK) {
        if (cap - n < READ_CHUNK && (rc = grow(&buf, &cap, n + READ_CHUNK, max_size, path, err)) != NM_OK) {
            /* A file exactly max_size long still fits: only fail if more bytes follow. */
            if (cap > n) rc = NM_OK;
            else break;
        }
        size_t want = cap - n < READ_CHUNK ? cap - n : READ_CHUNK;
        int got = gzread(g, buf + n, (unsigned)want);
        if (got < 0) {
            int zerr;
            const char *m = gzerror(g, &zerr);
            rc = nm_fail(err, NM_ERR_CORRUPT, "%s: gzip: %s", path, m ? m : "read error");
            break;
        }
        n += (size_t)got;
        if (got == 0) {
            /* zlib reports a cut-off member as Z_BUF_ERROR after returning what it could. */
            int zerr = Z_OK;
            const char *m = gzerror(g, &zerr);
            if (zerr != Z_OK || !gzeof(g))
                rc = nm_fail(err, NM_ERR_CORRUPT, "%s: gzip: %s", path, zerr != Z_OK && m && *m ? m : "truncated");
            break;
        }
        if (n == max_size) {
            uint8_t probe;
            if (gzread(g, &probe, 1) > 0)
                rc = nm_fail(err, NM_ERR_CORRUPT, "%s: larger than %zu bytes", path, max_size);
            break;
        }
    }
    gzclose(g);
    if (rc) {
        nm_free(buf);
        return rc;
    }
    *data = buf;
    *size = n;
    return NM_OK;
}

static int read_raw(const char *path, size_t max_size, uint8_t **data, size_t *size, nm_error *err)
{
    FILE *f = fopen(path, "rb");
    if (!f) return nm_fail(err, NM_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    long len = -1;
    if (fseek(f, 0, SEEK_END) == 0) len = ftell(f);
    if (len < 0 || fseek(f, 0, SEEK_SET) != 0) {
        fclose(f);
        return nm_fail(err, NM_ERR_IO, "%s: cannot size the file", path);
    }
    if ((unsigned long)len > max_size) {
        fclose(f);
        return nm_fail(err, NM_ERR_CORRUPT, "%s: larger than %zu bytes", path, max_size);
    }
    uint8_t *buf = (uint8_t *)nm_malloc((size_t)len);
    if (!buf) {
        fclose(f);
        return nm_fail(err, NM_ERR_NOMEM, "%s: out of memory reading %ld bytes", path, len);
    }
    size_t got = len ? fread(buf, 1, (size_t)len, f) : 0;
    int rc = NM_OK;
    if (got != (size_t)len || ferror(f)) rc = nm_fail(err, NM_ERR_IO, "%s: read error", path);
    fclose(f);
    if (rc) {
        nm_free(buf);
        return rc;
    }
    *data = buf;
    *size = got;
    return NM_OK;
}

int nm_file_read(const char *path, size_t max_size, uint8_t **data, size_t *size, nm_error *err)
{
    *data = NULL;
    *size = 0;
    if (!path || !*path) return nm_fail(err, NM_ERR_ARG, "no file name");
    if (max_size == 0) max_size = (size_t)1 << 32;
    /* a directory opens for reading on Linux and sizes as a huge file: name it instead */
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
        return nm_fail(err, NM_ERR_IO, "%s: is a directory, not a file", path);
    errno = 0;
    return nm_path_has_suffix(path, ".gz") ? read_gz(path, max_size, data, size, err)
                                           : read_raw(path, max_size, data, size, err);
}

int nm_file_write(const char *path, const void *data, size_t size, nm_error *err)
{
    if (!path || !*path) return nm_fail(err, NM_ERR_ARG, "no file name");
    size_t n = strlen(path);
    char *tmp = (char *)nm_malloc(n + 5);
    if (!tmp) return nm_fail(err, NM_ERR_NOMEM, "%s: out of memory", path);
    memcpy(tmp, path, n);
    memcpy(tmp + n, ".tmp", 5);
    int rc = NM_OK;
    const uint8_t *p = (const uint8_t *)data;
    if (nm_path_has_suffix(path, ".gz")) {
        /* zlib writes a fixed gzip header (mtime 0), so the same bytes give the same file. */
        gzFile g = gzopen(tmp, "wb6");
        if (!g) rc = nm_fail(err, NM_ERR_IO, "%s: cannot create: %s", tmp, strerror(errno));
        for (size_t off = 0; rc == NM_OK && off < size;) {
            unsigned piece = size - off < READ_CHUNK ? (unsigned)(size - off) : READ_CHUNK;
            if (gzwrite(g, p + off, piece) != (int)piece) rc = nm_fail(err, NM_ERR_IO, "%s: write error", tmp);
            off += piece;
        }
        if (g && gzclose(g) != Z_OK && rc == NM_OK) rc = nm_fail(err, NM_ERR_IO, "%s: write error", tmp);
    } else {
        FILE *f = fopen(tmp, "wb");
        if (!f) rc = nm_fail(err, NM_ERR_IO, "%s: cannot create: %s", tmp, strerror(errno));
        else {
            if (size && fwrite(p, 1, size, f) != size) rc = nm_fail(err, NM_ERR_IO, "%s: write error", tmp);
            if (fclose(f) != 0 && rc == NM_OK) rc = nm_fail(err, NM_ERR_IO, "%s: write error", tmp);
        }
    }
    if (rc == NM_OK && rename(tmp, path) != 0)
        rc = nm_fail(err, NM_ERR_IO, "%s: cannot rename into place: %s", path, strerror(errno));
    if (rc != NM_OK) remove(tmp);
    nm_free(tmp);
    return rc;
}
